package faults

import (
	"context"

	"github.com/idemcheck/idemcheck/history"
)

// Restart stops a replica gracefully (SIGTERM, SIGKILL after the stop
// timeout) and starts it again on the same address: a deploy. The whole
// restart happens in Inject, which returns once the replica is ready;
// Heal has nothing left to undo.
type Restart struct {
	Replica int
}

// Name is "restart".
func (f *Restart) Name() string { return "restart" }

// Class is history.Crash: requests in flight are cut off mid-way.
func (f *Restart) Class() history.Class { return history.Crash }

// Scope is history.Replica: every request on the replica is cut off.
func (f *Restart) Scope() history.Scope { return history.Replica }

// Target is "replicaN".
func (f *Restart) Target() string { return replicaName(f.Replica) }

// Inject restarts the replica and waits for it to be ready.
func (f *Restart) Inject(ctx context.Context, env Env) error { return env.Restart(ctx, f.Replica) }

// Heal does nothing: the restart is complete when Inject returns.
func (f *Restart) Heal(context.Context, Env) error { return nil }

func init() {
	register("restart", builder{"replica", nil, func(r *reader) Fault { return &Restart{Replica: r.replica} }})
}
