package gatewaysim

import (
	"context"
	"errors"
	"fmt"
)

// Controller is what a harness needs to drive a gateway during a run:
// follow its events, know how far they go, read the ledger, release holds,
// and add or remove faults. Local adapts an in-process *Sim; a simulator
// running as a process or a container is driven through an adapter over
// Client. Keeping the harness on this interface is what lets one runner
// serve both modes.
//
// Every method that reaches the gateway returns an error: a fault that
// was not installed must never be recorded as injected, and a ledger that
// could not be read must never be judged as empty.
type Controller interface {
	// SubscribeSince delivers every event with a Seq above since, in
	// order and without loss, until the returned cancel is called.
	SubscribeSince(since int64) (<-chan Event, func())
	// LastSeq asks the gateway itself for the Seq of its latest event. A
	// consumer that has handled that Seq has seen every decision made
	// before the call: this is the ledger feed's barrier.
	LastSeq(ctx context.Context) (int64, error)
	// Ledger reads every charge the gateway has committed, in order.
	Ledger(ctx context.Context) ([]Charge, error)
	// Release releases one hold; an empty or unknown id is an error
	// (ErrUnknownHold), never "every hold".
	Release(holdID string) error
	// ReleaseAll releases every hold, at cleanup.
	ReleaseAll() error
	// Holds lists the responses the gateway is withholding.
	Holds(ctx context.Context) ([]Hold, error)
	// AddFault installs a fault rule and returns its id.
	AddFault(f Fault) (string, error)
	// RemoveFault uninstalls a rule; an id already spent or removed is
	// not an error.
	RemoveFault(id string) error
	// SetTrace sets where requests name their order (Trace).
	SetTrace(ctx context.Context, t Trace) error
	// Expect notes which order an amount and currency pay for, under an
	// amount trace.
	Expect(ctx context.Context, e Expectation) error
	// Faults lists the installed fault rules with their firing counts:
	// what the harness proves unchanged at each inject and heal.
	Faults(ctx context.Context) ([]FaultStatus, error)
	// KeepKeys keeps the keys of the orders in recovery until it is
	// over.
	KeepKeys(ctx context.Context, k KeepKeys) error
}

// Local is the Controller of an in-process simulator.
func Local(s *Sim) Controller { return local{s} }

type local struct{ s *Sim }

func (l local) SubscribeSince(since int64) (<-chan Event, func()) { return l.s.SubscribeSince(since) }
func (l local) LastSeq(context.Context) (int64, error)            { return l.s.LastSeq(), nil }
func (l local) Ledger(context.Context) ([]Charge, error)          { return l.s.Ledger(), nil }
func (l local) ReleaseAll() error                                 { l.s.ReleaseAll(); return nil }
func (l local) Holds(context.Context) ([]Hold, error)             { return l.s.Holds(), nil }
func (l local) SetTrace(_ context.Context, t Trace) error         { return l.s.SetTrace(t) }
func (l local) Expect(_ context.Context, e Expectation) error     { return l.s.Expect(e) }
func (l local) Faults(context.Context) ([]FaultStatus, error)     { return l.s.Faults(), nil }
func (l local) KeepKeys(_ context.Context, k KeepKeys) error      { return l.s.KeepKeys(k) }

func (l local) Release(holdID string) error {
	if holdID == "" {
		return fmt.Errorf("release: %w: empty hold id", ErrUnknownHold)
	}
	return l.s.Release(holdID)
}

func (l local) AddFault(f Fault) (string, error) {
	if err := f.Validate(); err != nil {
		return "", err
	}
	return l.s.AddFault(f), nil
}

func (l local) RemoveFault(id string) error {
	if err := l.s.removeFault(id); err != nil && !errors.Is(err, ErrUnknownFault) {
		return err
	}
	return nil
}

// LastSeq is the Seq of the latest event (0 before the first).
func (s *Sim) LastSeq() int64 { return s.events.lastSeq() }

// Args are the cmd/gateway-sim flags that configure a simulator run as a
// process or a container like cfg (its provider, key TTL and idempotency).
func (cfg Config) Args() []string {
	var args []string
	if cfg.Provider != "" && cfg.Provider != ProviderStripe {
		args = append(args, "--provider="+cfg.Provider)
	}
	if cfg.IdempotencyTTL > 0 {
		args = append(args, "--ttl="+cfg.IdempotencyTTL.String())
	}
	if cfg.NoIdempotency {
		args = append(args, "--no-idempotency")
	}
	if !cfg.Trace.IsZero() {
		args = append(args, "--trace="+cfg.Trace.String())
	}
	return args
}
