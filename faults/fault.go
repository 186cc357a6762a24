package faults

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// Fault is one way of breaking the environment on purpose. Inject breaks,
// Heal undoes. A Fault value is one injection: it remembers what it
// installed (a toxic's name, a gateway fault id) so that Heal removes
// exactly that; build a new value (or Parse again) to inject again.
//
// Inject must leave nothing half-applied when it fails. Call Apply rather
// than Inject and Heal directly: Apply is what records the fault in the
// history.
type Fault interface {
	// Name is the fault kind as recorded: "latency", "kill",
	// "gateway:charge_then_hang", ...
	Name() string
	// Class is what the fault can do to a payment, as the checker judges
	// it: history.Crash, Slows, Business or Disturbs. The kind's own file
	// declares it; Apply records it.
	Class() history.Class
	// Scope is how far it reaches: history.Payment (one order's
	// payment), history.Replica (one replica's process) or
	// history.Environment (a link, a store, the gateway for every
	// order). The kind's own file declares it; Apply records it, and the
	// runner's gate, its sharing with the other examples in flight and
	// its cleanup order read it.
	Scope() history.Scope
	// Target is what it acts on: a link ("replica0->gateway"), a replica
	// ("replica1") or "gateway".
	Target() string
	Inject(ctx context.Context, env Env) error
	Heal(ctx context.Context, env Env) error
}

// Parametrized is implemented by faults with parameters worth recording
// (a latency, a match); Apply copies them into history.Fault.Params.
type Parametrized interface {
	Params() map[string]string
}

// Ordered is implemented by faults aimed at one order (gateway faults
// matched by order id, a kill inside that order's hold); Apply records it
// as history.Fault.Order so the checker can tie the fault to the order.
// It says what the fault aims at, not how far it reaches (Scope): a kill
// inside one order's hold kills a replica every example uses.
type Ordered interface {
	Order() string
}

// Momentary is implemented by faults whose disruption is their
// injection and their heal alone (a clock or a session zone moved by
// relaunching a replica): the runner's gate holds the other examples'
// requests for those steps alone, not while the state is in force.
type Momentary interface {
	Momentary() bool
}

// IsMomentary says whether f declares itself momentary.
func IsMomentary(f Fault) bool {
	m, ok := f.(Momentary)
	return ok && m.Momentary()
}

// Env is what faults act on: an environment (either mode, harness.Env)
// bound to the history the faults are recorded in. Bind makes one.
type Env interface {
	harness.Env
	Recorder() Recorder
	Logger() *slog.Logger
}

// Recorder is where Apply records faults: one example's history, or
// every history of a wave of examples living through the same fault.
// *history.Recorder is one.
type Recorder interface {
	Inject(f history.Fault) int
	Heal(id int)
}

// Bind makes env an Env whose faults are recorded in rec.
func Bind(env harness.Env, rec Recorder, log *slog.Logger) Env {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return bound{env, rec, log}
}

type bound struct {
	harness.Env
	rec Recorder
	log *slog.Logger
}

func (b bound) Recorder() Recorder   { return b.rec }
func (b bound) Logger() *slog.Logger { return b.log }

// Sentinel errors.
var (
	// ErrBadSpec marks every error about a fault spec, so the CLI can map
	// it to exit code 2 (bad scenario or incident file).
	ErrBadSpec = errors.New("bad fault spec")
	// ErrNotInjected is returned by Heal of a fault that was never
	// (successfully) injected.
	ErrNotInjected = errors.New("fault not injected")
)

// HealFunc undoes an applied fault and records the heal. It may be called
// again after an error (the fault then still counts as active); after a
// successful heal further calls do nothing.
type HealFunc func(ctx context.Context) error

// Apply injects f and records it in env's history once it has taken
// effect; the returned HealFunc heals it and records the heal once the
// heal has completed (after a restarted replica is ready). Stamping both
// ends on completion keeps the recorded heal conservative, which is what
// convergence (M6) is judged against. A failed injection records nothing:
// by Fault's contract it changed nothing.
func Apply(ctx context.Context, env Env, f Fault) (HealFunc, error) {
	if err := f.Inject(ctx, env); err != nil {
		return nil, fmt.Errorf("inject %s on %s: %w", f.Name(), f.Target(), err)
	}
	rec := record(f)
	id := env.Recorder().Inject(rec)
	env.Logger().Info("fault injected", "fault", rec.Name, "target", rec.Target, "params", rec.Params, "id", id)
	var mu sync.Mutex
	healed := false
	return func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if healed {
			return nil
		}
		if err := f.Heal(ctx, env); err != nil {
			return fmt.Errorf("heal %s on %s: %w", f.Name(), f.Target(), err)
		}
		healed = true
		env.Recorder().Heal(id)
		env.Logger().Info("fault healed", "fault", rec.Name, "target", rec.Target, "id", id)
		return nil
	}, nil
}

// Armed is implemented by faults that are installed now and strike later
// (gateway rules): their history entry is armed, not fired, and the run's
// ledger feed stamps Fired when the gateway reports the rule firing.
// RuleID is the simulator's id of the installed rule, which Apply records
// as history.Fault.Params[ParamRule]. Every other fault fires when Inject
// returns.
type Armed interface {
	RuleID() string
}

// ParamRule is the history.Fault.Params key naming the gateway rule an
// armed fault installed (Armed.RuleID): the ledger feed's firings are
// matched to the fault by it.
const ParamRule = "fault_id"

// Skewed is implemented by faults that move a replica's clock; Apply
// records the measured bound of the offset as history.Fault.Skew, which
// the checker allows for around a promise's end.
type Skewed interface {
	Skew() time.Duration
}

// record describes f as a history entry.
func record(f Fault) history.Fault {
	h := history.Fault{Name: f.Name(), Class: f.Class(), Scope: f.Scope(), Target: f.Target(), Fired: history.FiredOnInject}
	if p, ok := f.(Parametrized); ok {
		h.Params = p.Params()
	}
	if a, ok := f.(Armed); ok {
		h.Fired = 0
		if id := a.RuleID(); id != "" {
			h.Params = maps.Clone(h.Params)
			if h.Params == nil {
				h.Params = map[string]string{}
			}
			h.Params[ParamRule] = id
		}
	}
	if o, ok := f.(Ordered); ok {
		h.Order = o.Order()
	}
	if s, ok := f.(Skewed); ok {
		h.Skew = s.Skew()
	}
	return h
}

// replicaName is how a replica appears as a fault target.
func replicaName(i int) string { return fmt.Sprintf("replica%d", i) }
