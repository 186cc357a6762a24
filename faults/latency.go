package faults

import (
	"context"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// Latency delays every chunk of data on a link by Latency ± Jitter: a slow
// network or a slow peer. On the downstream of replicaN->gateway it delays
// the gateway's answers after the charge was decided, which is how a
// client timeout turns a success into an indeterminate result.
type Latency struct {
	Link      harness.Link
	Direction harness.Direction // Upstream, Downstream (default) or Both
	Latency   time.Duration
	Jitter    time.Duration
	Toxicity  float32 // share of connections affected; 0 means all

	toxics toxics
}

// Name is "latency".
func (f *Latency) Name() string { return "latency" }

// Class is history.Slows: it only delays traffic.
func (f *Latency) Class() history.Class { return history.Slows }

// Scope is history.Environment: a link every example's requests may cross.
func (f *Latency) Scope() history.Scope { return history.Environment }

// Target is the link.
func (f *Latency) Target() string { return string(f.Link) }

// Params records latency and jitter.
func (f *Latency) Params() map[string]string {
	return toxicParams(f.Direction, f.Toxicity, "latency", f.Latency.String(), "jitter", f.Jitter.String())
}

// Inject adds a latency toxic.
func (f *Latency) Inject(_ context.Context, env Env) error {
	lat, err := millis("latency", f.Latency)
	if err != nil {
		return err
	}
	jit, err := millis("jitter", f.Jitter)
	if err != nil {
		return err
	}
	if err := positive("latency", lat); err != nil {
		return err
	}
	return f.toxics.add(env, f.Link, f.Direction, f.Toxicity, "latency", map[string]any{"latency": lat, "jitter": jit})
}

// Heal removes the toxic; data already delayed is still delivered.
func (f *Latency) Heal(ctx context.Context, env Env) error { return f.toxics.remove(ctx, env) }

func init() {
	register("latency", builder{"link", []string{"latency", "jitter"}, func(r *reader) Fault {
		return &Latency{Link: r.link, Direction: r.dir, Latency: r.duration("latency", true), Jitter: r.duration("jitter", false), Toxicity: r.toxicity()}
	}})
}
