package faults

import (
	"context"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// LimitData closes a connection once Bytes bytes have passed in the
// direction: a response cut off half way, which an HTTP client sees as an
// unexpected EOF after the server may already have acted.
type LimitData struct {
	Link      harness.Link
	Direction harness.Direction // Upstream, Downstream (default) or Both
	Bytes     int64
	Toxicity  float32

	toxics toxics
}

// Name is "limit_data".
func (f *LimitData) Name() string { return "limit_data" }

// Class is history.Disturbs: connections are cut mid-answer.
func (f *LimitData) Class() history.Class { return history.Disturbs }

// Scope is history.Environment: a link every example's requests may cross.
func (f *LimitData) Scope() history.Scope { return history.Environment }

// Target is the link.
func (f *LimitData) Target() string { return string(f.Link) }

// Params records the byte limit.
func (f *LimitData) Params() map[string]string {
	return toxicParams(f.Direction, f.Toxicity, "bytes", i64toa(f.Bytes))
}

// Inject adds a limit_data toxic.
func (f *LimitData) Inject(_ context.Context, env Env) error {
	if err := positive("bytes", f.Bytes); err != nil {
		return err
	}
	return f.toxics.add(env, f.Link, f.Direction, f.Toxicity, "limit_data", map[string]any{"bytes": f.Bytes})
}

// Heal removes the toxic.
func (f *LimitData) Heal(ctx context.Context, env Env) error { return f.toxics.remove(ctx, env) }

func init() {
	register("limit_data", builder{"link", []string{"bytes"}, func(r *reader) Fault {
		return &LimitData{Link: r.link, Direction: r.dir, Bytes: r.integer("bytes", true), Toxicity: r.toxicity()}
	}})
}
