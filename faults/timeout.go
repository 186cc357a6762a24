package faults

import (
	"context"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// Timeout stops all data on a link: nothing gets through, and after
// Timeout the connection is closed (Timeout 0: held open until healed). It
// is the black hole a dead peer behind a live load balancer looks like.
// toxiproxy closes the stalled connections when the toxic is removed, so a
// heal ends them rather than letting them resume.
type Timeout struct {
	Link      harness.Link
	Direction harness.Direction // Upstream, Downstream (default) or Both
	Timeout   time.Duration
	Toxicity  float32

	toxics toxics
}

// Name is "timeout".
func (f *Timeout) Name() string { return "timeout" }

// Class is history.Disturbs: connections stall and close.
func (f *Timeout) Class() history.Class { return history.Disturbs }

// Scope is history.Environment: a link every example's requests may cross.
func (f *Timeout) Scope() history.Scope { return history.Environment }

// Target is the link.
func (f *Timeout) Target() string { return string(f.Link) }

// Params records the timeout.
func (f *Timeout) Params() map[string]string {
	return toxicParams(f.Direction, f.Toxicity, "timeout", f.Timeout.String())
}

// Inject adds a timeout toxic.
func (f *Timeout) Inject(_ context.Context, env Env) error {
	ms, err := millis("timeout", f.Timeout)
	if err != nil {
		return err
	}
	return f.toxics.add(env, f.Link, f.Direction, f.Toxicity, "timeout", map[string]any{"timeout": ms})
}

// Heal removes the toxic.
func (f *Timeout) Heal(ctx context.Context, env Env) error { return f.toxics.remove(ctx, env) }

func init() {
	register("timeout", builder{"link", []string{"timeout"}, func(r *reader) Fault {
		return &Timeout{Link: r.link, Direction: r.dir, Timeout: r.duration("timeout", false), Toxicity: r.toxicity()}
	}})
}
