package faults

import (
	"context"
	"sync"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// Down takes a link down: its listener closes, open connections are cut
// and new dials are refused, until Heal brings it back on the same
// address. It has no direction. On replicaN->postgres it is a database
// outage for one replica; on client->replicaN a replica that vanished
// from the load balancer.
type Down struct {
	Link harness.Link

	mu   sync.Mutex
	down bool
}

// Name is "down".
func (f *Down) Name() string { return "down" }

// Class is history.Disturbs: requests on the link fail.
func (f *Down) Class() history.Class { return history.Disturbs }

// Scope is history.Environment: a link every example's requests may cross.
func (f *Down) Scope() history.Scope { return history.Environment }

// Target is the link.
func (f *Down) Target() string { return string(f.Link) }

// Inject disables the link.
func (f *Down) Inject(_ context.Context, env Env) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := env.SetLinkEnabled(f.Link, false); err != nil {
		return err
	}
	f.down = true
	return nil
}

// Heal enables the link again.
func (f *Down) Heal(_ context.Context, env Env) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down {
		return ErrNotInjected
	}
	if err := env.SetLinkEnabled(f.Link, true); err != nil {
		return err
	}
	f.down = false
	return nil
}

func init() {
	register("down", builder{"link", nil, func(r *reader) Fault { return &Down{Link: r.link} }})
}
