package faults

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// ClockSkew relaunches a replica with its wall clock ahead (a positive
// Offset) or behind, against the database, the gateway, the other
// replicas and the harness: a host whose NTP daemon died. The clock is
// moved the libfaketime way (harness.Launch.Env): FAKETIME, which the
// reference server honours itself, and LD_PRELOAD of libfaketime where it
// is installed, which reaches a dynamically linked server that reads the
// time through libc, not a Go binary. What was in force is measured, not
// assumed: Inject reads the replica's HTTP Date header against the
// harness's clock, and the history records the bound (Skew) that the
// checker widens its expiry band by. Heal relaunches the replica on the
// true clock.
type ClockSkew struct {
	Replica int
	Offset  time.Duration

	measured skewBounds
}

// Name is "clock_skew".
func (f *ClockSkew) Name() string { return "clock_skew" }

// Class is history.Skews: the relaunches that move the clock and move it
// back are recorded as crash-class faults of their own (relaunch); while
// it is in force, a clock ahead of its peers' makes a live owner's lease
// look expired (a correct server takes the key over and re-sends its
// charge under the same gateway key) and one behind keeps a dead owner's
// lease alive longer (recovery takes that much longer).
func (f *ClockSkew) Class() history.Class { return history.Skews }

// Scope is history.Replica: the replica is relaunched to apply and undo it.
func (f *ClockSkew) Scope() history.Scope { return history.Replica }

// Momentary is true: only the relaunches disrupt, not the state between.
func (f *ClockSkew) Momentary() bool { return true }

// Target is "replicaN".
func (f *ClockSkew) Target() string { return replicaName(f.Replica) }

// Params records the offset asked for and the one measured.
func (f *ClockSkew) Params() map[string]string {
	return map[string]string{"offset": harness.FakeTime(f.Offset), "measured": f.measured.String()}
}

// Skew is the bound of the measured offset: what the checker allows for.
func (f *ClockSkew) Skew() time.Duration { return f.measured.bound() }

// Inject relaunches the replica with its clock moved and measures it.
func (f *ClockSkew) Inject(ctx context.Context, env Env) error {
	if err := relaunch(ctx, env, f.Replica, f.Name(), func(l *harness.Launch) { l.Clock = f.Offset }); err != nil {
		return err
	}
	m, err := measureSkew(ctx, env.ReplicaURL(f.Replica))
	if err != nil {
		env.Logger().Warn("clock skew not measured; allowing for the offset asked and the Date header's second", "replica", f.Replica, "err", err)
		m = skewBounds{lo: f.Offset - time.Second, hi: f.Offset + time.Second}
	}
	f.measured = m
	return nil
}

// Heal relaunches the replica on the true clock.
func (f *ClockSkew) Heal(ctx context.Context, env Env) error {
	return relaunch(ctx, env, f.Replica, f.Name(), func(l *harness.Launch) { l.Clock = 0 })
}

// skewBounds is the interval a replica's clock offset lies in.
type skewBounds struct{ lo, hi time.Duration }

func (b skewBounds) mid() time.Duration { return (b.lo + b.hi) / 2 }

// bound is the largest offset the interval allows, in either direction.
func (b skewBounds) bound() time.Duration { return max(abs(b.lo), abs(b.hi)) }

func (b skewBounds) String() string {
	return fmt.Sprintf("%s (between %s and %s)", b.mid().Round(time.Millisecond), b.lo.Round(time.Millisecond), b.hi.Round(time.Millisecond))
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// skewSamples is how many answers measureSkew reads: each Date header
// confines the offset to a second, and a second boundary falling between
// two samples narrows it.
const skewSamples = 3

// measureSkew reads the Date header of a few answers from base (any path
// answers with one) and intersects what each says about the server's
// clock: an answer dated D, sent at t0 and received at t1 on the
// harness's clock, was dated at a server time in [D, D+1s) somewhere in
// [t0, t1], so the offset lies in (D - t1, D + 1s - t0).
func measureSkew(ctx context.Context, base string) (skewBounds, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	b := skewBounds{lo: -1 << 62, hi: 1 << 62}
	for range skewSamples {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/", nil)
		if err != nil {
			return b, err
		}
		t0 := time.Now()
		resp, err := c.Do(req)
		t1 := time.Now()
		if err != nil {
			return b, err
		}
		resp.Body.Close()
		d, err := http.ParseTime(resp.Header.Get("Date"))
		if err != nil {
			return b, fmt.Errorf("Date header %q: %w", resp.Header.Get("Date"), err)
		}
		b.lo, b.hi = max(b.lo, d.Sub(t1)), min(b.hi, d.Add(time.Second).Sub(t0))
	}
	return b, nil
}

func init() {
	register("clock_skew", builder{"replica", []string{"offset"}, func(r *reader) Fault {
		return &ClockSkew{Replica: r.replica, Offset: r.signedDuration("offset")}
	}})
}
