package faults

import (
	"context"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// Bandwidth limits a link to Rate KB/s (toxiproxy's unit: 1 KB = 1024
// bytes): a congested path on which large bodies take long while small
// ones barely notice.
type Bandwidth struct {
	Link      harness.Link
	Direction harness.Direction // Upstream, Downstream (default) or Both
	Rate      int64             // KB/s
	Toxicity  float32

	toxics toxics
}

// Name is "bandwidth".
func (f *Bandwidth) Name() string { return "bandwidth" }

// Class is history.Slows: it only delays traffic.
func (f *Bandwidth) Class() history.Class { return history.Slows }

// Scope is history.Environment: a link every example's requests may cross.
func (f *Bandwidth) Scope() history.Scope { return history.Environment }

// Target is the link.
func (f *Bandwidth) Target() string { return string(f.Link) }

// Params records the rate.
func (f *Bandwidth) Params() map[string]string {
	return toxicParams(f.Direction, f.Toxicity, "rate", i64toa(f.Rate))
}

// Inject adds a bandwidth toxic.
func (f *Bandwidth) Inject(_ context.Context, env Env) error {
	if err := positive("rate", f.Rate); err != nil {
		return err
	}
	return f.toxics.add(env, f.Link, f.Direction, f.Toxicity, "bandwidth", map[string]any{"rate": f.Rate})
}

// Heal removes the toxic.
func (f *Bandwidth) Heal(ctx context.Context, env Env) error { return f.toxics.remove(ctx, env) }

func init() {
	register("bandwidth", builder{"link", []string{"rate"}, func(r *reader) Fault {
		return &Bandwidth{Link: r.link, Direction: r.dir, Rate: r.integer("rate", true), Toxicity: r.toxicity()}
	}})
}
