package faults

import (
	"context"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// Slicer cuts the data on a link into small chunks (AverageSize bytes ±
// SizeVariation) with Delay between them: it finds servers that assume a
// request arrives in one read.
type Slicer struct {
	Link          harness.Link
	Direction     harness.Direction // Upstream, Downstream (default) or Both
	AverageSize   int
	SizeVariation int
	Delay         time.Duration // toxiproxy's resolution here is 1µs
	Toxicity      float32

	toxics toxics
}

// Name is "slicer".
func (f *Slicer) Name() string { return "slicer" }

// Class is history.Slows: it only delays traffic.
func (f *Slicer) Class() history.Class { return history.Slows }

// Scope is history.Environment: a link every example's requests may cross.
func (f *Slicer) Scope() history.Scope { return history.Environment }

// Target is the link.
func (f *Slicer) Target() string { return string(f.Link) }

// Params records the slicing.
func (f *Slicer) Params() map[string]string {
	return toxicParams(f.Direction, f.Toxicity, "average_size", itoa(f.AverageSize),
		"size_variation", itoa(f.SizeVariation), "delay", f.Delay.String())
}

// Inject adds a slicer toxic.
func (f *Slicer) Inject(_ context.Context, env Env) error {
	if err := positive("average_size", int64(f.AverageSize)); err != nil {
		return err
	}
	if f.SizeVariation < 0 || f.SizeVariation >= f.AverageSize || f.Delay < 0 {
		return errRange("size_variation and delay", "0 <= size_variation < average_size, delay >= 0")
	}
	attrs := map[string]any{"average_size": f.AverageSize, "size_variation": f.SizeVariation, "delay": f.Delay.Microseconds()}
	return f.toxics.add(env, f.Link, f.Direction, f.Toxicity, "slicer", attrs)
}

// Heal removes the toxic.
func (f *Slicer) Heal(ctx context.Context, env Env) error { return f.toxics.remove(ctx, env) }

func init() {
	register("slicer", builder{"link", []string{"average_size", "size_variation", "delay"}, func(r *reader) Fault {
		return &Slicer{Link: r.link, Direction: r.dir, AverageSize: int(r.integer("average_size", true)),
			SizeVariation: int(r.integer("size_variation", false)), Delay: r.duration("delay", false), Toxicity: r.toxicity()}
	}})
}
