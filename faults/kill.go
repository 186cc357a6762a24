package faults

import (
	"context"
	"sync"

	"github.com/idemcheck/idemcheck/history"
)

// Kill SIGKILLs a replica's process group: a crash with no chance to clean
// up, at whatever point its requests had reached. Heal restarts it on the
// same address and waits for it to be ready, so the recorded window ends
// when the replica serves again.
type Kill struct {
	Replica int
	// Hold and OrderID, when set, say the kill landed inside a gateway
	// hold (charge-then-hang) for that order; they are recorded so the
	// checker and the report can point at the crash window.
	Hold    string
	OrderID string

	mu     sync.Mutex
	killed bool
}

// Name is "kill".
func (f *Kill) Name() string { return "kill" }

// Class is history.Crash: a request cut off mid-way may have charged.
func (f *Kill) Class() history.Class { return history.Crash }

// Scope is history.Replica: every request on the replica is cut off, whatever order the kill was aimed at.
func (f *Kill) Scope() history.Scope { return history.Replica }

// Target is "replicaN".
func (f *Kill) Target() string { return replicaName(f.Replica) }

// Params records the hold the kill landed in, if any.
func (f *Kill) Params() map[string]string {
	if f.Hold == "" {
		return nil
	}
	return map[string]string{"hold": f.Hold}
}

// Order is the order whose hold the kill landed in, if any.
func (f *Kill) Order() string { return f.OrderID }

// Inject kills the replica; it returns once the process is reaped.
func (f *Kill) Inject(_ context.Context, env Env) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := env.Kill(f.Replica); err != nil {
		return err
	}
	f.killed = true
	return nil
}

// Heal restarts the replica.
func (f *Kill) Heal(ctx context.Context, env Env) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.killed {
		return ErrNotInjected
	}
	if err := env.Restart(ctx, f.Replica); err != nil {
		return err
	}
	f.killed = false
	return nil
}

func init() {
	register("kill", builder{"replica", nil, func(r *reader) Fault { return &Kill{Replica: r.replica} }})
}
