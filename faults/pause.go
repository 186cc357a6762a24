package faults

import (
	"context"
	"sync"

	"github.com/idemcheck/idemcheck/history"
)

// Pause SIGSTOPs a replica's process group: its sockets stay open and its
// database locks stay held, so requests and duplicates hang instead of
// failing (a GC pause, a frozen VM). Heal SIGCONTs it and the held
// requests complete, possibly long after their clients gave up.
type Pause struct {
	Replica int

	mu     sync.Mutex
	paused bool
}

// Name is "pause".
func (f *Pause) Name() string { return "pause" }

// Class is history.Disturbs: requests hang until it heals, then complete.
func (f *Pause) Class() history.Class { return history.Disturbs }

// Scope is history.Replica: every request on the replica hangs.
func (f *Pause) Scope() history.Scope { return history.Replica }

// Target is "replicaN".
func (f *Pause) Target() string { return replicaName(f.Replica) }

// Inject stops the replica; it returns once the kernel reports it stopped.
func (f *Pause) Inject(_ context.Context, env Env) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := env.Pause(f.Replica); err != nil {
		return err
	}
	f.paused = true
	return nil
}

// Heal resumes the replica.
func (f *Pause) Heal(_ context.Context, env Env) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.paused {
		return ErrNotInjected
	}
	if err := env.Resume(f.Replica); err != nil {
		return err
	}
	f.paused = false
	return nil
}

func init() {
	register("pause", builder{"replica", nil, func(r *reader) Fault { return &Pause{Replica: r.replica} }})
}
