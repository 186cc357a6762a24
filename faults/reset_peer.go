package faults

import (
	"context"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// ResetPeer resets a connection (TCP RST) when data arrives on it, after
// Timeout: the peer crashed or a middlebox dropped the connection
// mid-request. toxiproxy sets SO_LINGER 0 only on connections opened while
// the toxic is present; a kept-alive connection opened before is closed
// with a FIN instead (the client sees EOF rather than ECONNRESET). Both
// are indeterminate to an HTTP client.
type ResetPeer struct {
	Link      harness.Link
	Direction harness.Direction // Upstream, Downstream (default) or Both
	Timeout   time.Duration
	Toxicity  float32

	toxics toxics
}

// Name is "reset_peer".
func (f *ResetPeer) Name() string { return "reset_peer" }

// Class is history.Disturbs: connections are reset.
func (f *ResetPeer) Class() history.Class { return history.Disturbs }

// Scope is history.Environment: a link every example's requests may cross.
func (f *ResetPeer) Scope() history.Scope { return history.Environment }

// Target is the link.
func (f *ResetPeer) Target() string { return string(f.Link) }

// Params records the timeout.
func (f *ResetPeer) Params() map[string]string {
	return toxicParams(f.Direction, f.Toxicity, "timeout", f.Timeout.String())
}

// Inject adds a reset_peer toxic.
func (f *ResetPeer) Inject(_ context.Context, env Env) error {
	ms, err := millis("timeout", f.Timeout)
	if err != nil {
		return err
	}
	return f.toxics.add(env, f.Link, f.Direction, f.Toxicity, "reset_peer", map[string]any{"timeout": ms})
}

// Heal removes the toxic.
func (f *ResetPeer) Heal(ctx context.Context, env Env) error { return f.toxics.remove(ctx, env) }

func init() {
	register("reset_peer", builder{"link", []string{"timeout"}, func(r *reader) Fault {
		return &ResetPeer{Link: r.link, Direction: r.dir, Timeout: r.duration("timeout", false), Toxicity: r.toxicity()}
	}})
}
