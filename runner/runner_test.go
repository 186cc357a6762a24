package runner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/runner"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/search"
	"github.com/idemcheck/idemcheck/target"
)

// runnerOn starts the test server (it passes the client's key to the
// gateway and keeps no store of its own) under pol, with the gateway's
// idempotency on or off, and returns a Runner on it, its configuration
// edited by edits.
func runnerOn(t *testing.T, pol target.Policy, gatewayDedups bool, edits ...func(*runner.Config)) *runner.Runner {
	t.Helper()
	tg := harnesstest.Target(t, false, nil)
	tg.Policy = pol
	opts := harness.Options{Replicas: 1, Gateway: gatewaysim.Config{NoIdempotency: !gatewayDedups}}
	env, tg := harnesstest.StartPrepared(t, tg, opts)
	cfg := runner.Config{Env: env, Target: tg, RunID: "rn", StopEarly: checker.MovedMoneyWrongly}
	for _, edit := range edits {
		edit(&cfg)
	}
	r := runner.New(cfg)
	t.Cleanup(r.Close)
	return r
}

// gated gives a runner's examples a gate, as a certification does.
func gated(c *runner.Config) { c.Gate = runner.NewGate() }

func purposes(h *history.History) []string {
	var out []string
	for _, op := range h.Ops {
		out = append(out, op.Purpose)
	}
	return out
}

// playComplete plays sc, which must be played to its end.
func playComplete(t *testing.T, r *runner.Runner, sc scenarios.Scenario) *history.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	h, err := r.Run(ctx, sc)
	if err != nil || !h.Complete {
		t.Fatalf("run: %v (complete %v)", err, h.Complete)
	}
	return h
}

// lateRetry is a late-retry example: a first request, then a probe at
// each of at (in TTLs since the first request).
func lateRetry(at ...float64) scenarios.Scenario {
	steps := []scenarios.Step{{Send: &scenarios.Send{ID: "first", Key: "k", Order: "o", Tenant: -1, Purpose: "first"}}}
	for i, ttls := range at {
		steps = append(steps, scenarios.Step{Wait: &scenarios.Wait{TTL: ttls}},
			scenarios.Step{Send: &scenarios.Send{ID: fmt.Sprintf("r%d", i+1), Key: "k", Order: "o", Tenant: -1, Purpose: fmt.Sprintf("late-retry@%gxTTL", ttls)}})
	}
	return scenarios.Scenario{Name: "late", Family: "late-retry", Steps: steps}
}

// TestRun_LateRetryStopsAtTheFirstDoubleCharge: a late-retry example whose
// first probe past the TTL already charged twice does not wait out its
// later probes, so the failure is reported when it happens; one that
// holds plays every probe.
func TestRun_LateRetryStopsAtTheFirstDoubleCharge(t *testing.T) {
	pol := target.Policy{TTL: 200 * time.Millisecond, RetryWindow: 3 * time.Second}
	sc := lateRetry(3, 8)
	for _, c := range []struct {
		name          string
		gatewayDedups bool
		ops           int
		failed        bool
	}{
		{"every retry charges", false, 2, true},
		{"the gateway deduplicates", true, 3, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runnerOn(t, pol, c.gatewayDedups)
			h := playComplete(t, r, sc)
			res := checker.Check(h)
			if len(h.Ops) != c.ops || res.Failed() != c.failed {
				t.Fatalf("ops %v, charges %d, failed %v (first FAILED %q): want %d ops, failed %v",
					purposes(h), len(h.Charges), res.Failed(), search.FirstFailed(res), c.ops, c.failed)
			}
		})
	}
}

// TestRun_LateRetryStopsAtAChargeAfterADecline: a probe that charges a
// payment the server had declined is money moved wrongly for good (M3);
// the example stops there too.
func TestRun_LateRetryStopsAtAChargeAfterADecline(t *testing.T) {
	pol := target.Policy{TTL: 200 * time.Millisecond, RetryWindow: 3 * time.Second}
	sc := lateRetry(3, 8)
	decline := scenarios.Fault{ID: "decline", Kind: "gateway:decline", Order: "o"}
	sc.Steps = append([]scenarios.Step{{Fault: &decline}, sc.Steps[0], {Heal: "decline"}}, sc.Steps[1:]...)
	r := runnerOn(t, pol, false) // the test server keeps nothing: the probe charges
	h := playComplete(t, r, sc)
	res := checker.Check(h)
	if m3, _ := res.Find("M3"); len(h.Ops) != 2 || m3.Verdict != checker.Failed {
		t.Fatalf("ops %v, M3 %s: want the first request and the probe that charged, M3 FAILED", purposes(h), m3.Verdict)
	}
}

// TestRun_TTLWaitFromAnAnswer: a ttl wait from a send counts from that
// send's answer, not from the example's first request: behind a first
// request the gateway holds 600ms, a wait of one TTL (200ms) from its
// answer sends the probe a TTL after the answer, where one from the
// first request would have come before the answer.
func TestRun_TTLWaitFromAnAnswer(t *testing.T) {
	pol := target.Policy{TTL: 200 * time.Millisecond, RetryWindow: 3 * time.Second}
	slow := scenarios.Fault{ID: "slow", Kind: "gateway:slow", Order: "o", Params: map[string]string{"latency": "600ms"}}
	sc := lateRetry(1)
	sc.Steps[1].Wait.From = "first"
	sc.Steps = append([]scenarios.Step{{Fault: &slow}, sc.Steps[0], {Heal: "slow"}}, sc.Steps[1:]...)
	r := runnerOn(t, pol, true)
	h := playComplete(t, r, sc)
	if len(h.Ops) != 2 {
		t.Fatalf("ops %v: want the first request and the probe", purposes(h))
	}
	if gap := h.Ops[1].Invoke - h.Ops[0].Complete; gap < pol.TTL {
		t.Fatalf("probe sent %v after the first request's answer (%v after it was sent): want a TTL (%v) after the answer",
			gap, h.Ops[1].Invoke-h.Ops[0].Invoke, pol.TTL)
	}
}

// TestRun_NoProbePastStopProbing: a late-retry example still waiting when
// the run's hard end comes sends no probe whose wait would end past it;
// it ends with the probes it sent, every one answered, and is counted.
func TestRun_NoProbePastStopProbing(t *testing.T) {
	pol := target.Policy{TTL: 200 * time.Millisecond, RetryWindow: 3 * time.Second}
	sc := lateRetry(2, 14)
	// The second probe is due 2.8s after the first request, past the stop.
	stop := func(c *runner.Config) { c.StopProbing = time.Now().Add(1500 * time.Millisecond) }
	r := runnerOn(t, pol, true, stop)
	h := playComplete(t, r, sc)
	if got := purposes(h); len(got) != 2 || got[1] != "late-retry@2xTTL" {
		t.Fatalf("ops %v: want the first request and the probe due before the stop", got)
	}
	if n := r.Cut("late-retry"); n != (runner.Cuts{Probing: 1}) {
		t.Fatalf("Cut = %+v, want one example stopped before a probe", n)
	}
	if res := checker.Check(h); res.Failed() {
		t.Fatalf("a cut example of a server that deduplicates failed %s", search.FirstFailed(res))
	}
}

// TestRun_CutAtHardEnd: an example still in flight at the runner's hard
// end is cut there, its request held at the gate by another example's
// disruption never sent: Run returns ErrCut for both, within a bound, and
// counts them.
func TestRun_CutAtHardEnd(t *testing.T) {
	hardEnd := func(c *runner.Config) { c.HardEnd = time.Now().Add(3 * time.Second) }
	r := runnerOn(t, target.Policy{TTL: time.Hour, RecoveryWindow: time.Second, MaxWait: time.Second}, true, gated, hardEnd)
	// The disruptor fails every order at the gateway (a fault on the
	// whole environment) and holds the gate for a minute.
	disruptor := scenarios.Scenario{Name: "disrupt", Family: "gateway-faults", Steps: []scenarios.Step{
		{Fault: &scenarios.Fault{ID: "down", Kind: "gateway:fail_before_charge"}},
		{Send: &scenarios.Send{ID: "a", Key: "k", Order: "o", Tenant: -1}},
		{Wait: &scenarios.Wait{For: time.Minute}},
		{Heal: "down"},
	}}
	held := scenarios.Scenario{Name: "held", Family: "concurrent-duplicates", Steps: []scenarios.Step{
		{Send: &scenarios.Send{ID: "b", Key: "k", Order: "o", Tenant: -1}},
	}}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		h, err := r.Run(ctx, disruptor)
		if len(h.Ops) != 1 {
			err = fmt.Errorf("disruptor's ops %v, want its one request", purposes(h))
		}
		done <- err
	}()
	// The disruptor's request is answered only once it owns the gate.
	if _, err := r.Ledger().Feed().WaitOrder(ctx, "ord_rn1_o", gatewaysim.EventFault); err != nil {
		t.Fatalf("the disruptor's request never reached the gateway: %v", err)
	}
	h, err := r.Run(ctx, held)
	if !errors.Is(err, runner.ErrCut) || len(h.Ops) != 0 {
		t.Fatalf("held example: %v, %d ops; want ErrCut and its request never sent", err, len(h.Ops))
	}
	if err := <-done; !errors.Is(err, runner.ErrCut) {
		t.Fatalf("disruptor: %v, want ErrCut", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the hard end did not end the examples")
	}
	for fam, want := range map[string]runner.Cuts{"gateway-faults": {HardEnd: 1}, "concurrent-duplicates": {HardEnd: 1}} {
		if got := r.Cut(fam); got != want {
			t.Errorf("Cut(%s) = %+v, want %+v", fam, got, want)
		}
	}
}

// TestRun_ConvergingSendRetriesToOneDeadline: a converging send sent after
// the recovery window retries until the window's start plus the window
// and the slack, not a window later (not from the send, after the window
// had been waited out), and the example's final convergence does not
// give its key a deadline of its own again.
func TestRun_ConvergingSendRetriesToOneDeadline(t *testing.T) {
	r := runnerOn(t, target.Policy{TTL: time.Hour, RecoveryWindow: time.Second, MaxWait: time.Second}, true)
	pol := r.Config().Target.Policy // as prepared: its slack is the runner's
	fail := func(id, order string) *scenarios.Fault {
		return &scenarios.Fault{ID: id, Kind: "gateway:fail_before_charge", Order: order}
	}
	sc := scenarios.Scenario{Name: "converge", Family: "crash-window", Steps: []scenarios.Step{
		{Fault: fail("stuck", "o1")},
		{Fault: fail("brief", "o2")},
		{Send: &scenarios.Send{ID: "s2", Key: "k2", Order: "o2", Tenant: -1}},
		{Heal: "brief"},
		{Wait: &scenarios.Wait{Recovery: true}},
		{Send: &scenarios.Send{ID: "final", Key: "k1", Order: "o1", Tenant: -1, Purpose: "retry-after-recovery", Async: true, Converge: true}},
		{Wait: &scenarios.Wait{Responses: []string{"*"}}},
		{Heal: "stuck"},
	}}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	h, err := r.Run(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	brief := h.Ops[0].Order // o2's: its fault's heal starts the recovery window
	var healed time.Duration
	var stuck string // o1's real order
	for _, f := range h.Faults {
		if f.Order == brief {
			healed = f.Heal
		} else {
			stuck = f.Order
		}
	}
	deadline := healed + pol.RecoveryWindow + pol.ConvergeSlack()
	tries := 0
	for _, op := range h.Ops {
		switch op.Purpose {
		case "retry-after-recovery":
			tries++
			if op.Invoke > deadline {
				t.Errorf("op %d sent %v after the heal: past the deadline, %v after it", op.ID, op.Invoke-healed, deadline-healed)
			}
		case "retry-until-definitive":
			if op.Order != stuck {
				continue // o2's first answer was a 502: it converges at the end
			}
			t.Errorf("op %d: a key that converged to its deadline was retried again", op.ID)
		}
	}
	if tries < 2 {
		t.Errorf("%d tries of the converging send, want it retried while the gateway fails (ops %v)", tries, purposes(h))
	}
}

// TestRun_KeyStoreFaultNeedsAStore: a fault on the target's key store
// ("replica0->store") against a target that keeps none is an error that
// says so, not a fault on some other link.
func TestRun_KeyStoreFaultNeedsAStore(t *testing.T) {
	r := runnerOn(t, target.Policy{TTL: time.Hour, RecoveryWindow: time.Second, MaxWait: time.Second}, true)
	if len(r.Config().Target.Needs) != 0 {
		t.Fatalf("the test server needs %v, want no store", r.Config().Target.Needs)
	}
	sc := scenarios.Scenario{Name: "store", Family: "concurrent-duplicates", Steps: []scenarios.Step{
		{Fault: &scenarios.Fault{ID: "slow", Kind: "latency", Link: "replica0->store", Params: map[string]string{"latency": "5ms"}}},
		{Send: &scenarios.Send{ID: "a", Key: "k1", Order: "o1", Tenant: -1}},
	}}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := r.Run(ctx, sc)
	if err == nil || !strings.Contains(err.Error(), "keeps none") {
		t.Fatalf("run: %v, want the fault refused: the target keeps no store", err)
	}
}

// TestRun_ConvergeRetriesEachBodyOfAKey: a payment's request answered
// 502, then another body under its key (key-reuse) answered
// definitively: the payment's own body is still retried at the end, for
// the checker judges convergence on the requests carrying the key's
// body. Retrying the key's last request only (the other body) left a
// soak's key-reuse key undecided (M6 UNKNOWN).
func TestRun_ConvergeRetriesEachBodyOfAKey(t *testing.T) {
	r := runnerOn(t, target.Policy{TTL: time.Hour, RecoveryWindow: 100 * time.Millisecond, MaxWait: 100 * time.Millisecond}, false)
	sc := scenarios.Scenario{Name: "reuse", Family: "key-reuse", Steps: []scenarios.Step{
		{Fault: &scenarios.Fault{ID: "down", Kind: "gateway:fail_before_charge", Order: "o"}},
		{Send: &scenarios.Send{ID: "first", Key: "k", Order: "o", Amount: 500, Tenant: -1, Purpose: "first"}},
		{Heal: "down"},
		{Send: &scenarios.Send{ID: "m0", Key: "k", Order: "o", Amount: 5001, Tenant: -1, Purpose: "different:amount"}},
	}}
	h := playComplete(t, r, sc)
	first, other := h.Ops[0], h.Ops[1]
	if first.Outcome != history.Info || other.Outcome == history.Info {
		t.Fatalf("set-up: first %s %d, other body %s %d; want the first indeterminate and the other answered", first.Outcome, first.Status, other.Outcome, other.Status)
	}
	var retried []string
	for _, op := range h.Ops[2:] {
		if op.Purpose == "retry-until-definitive" {
			retried = append(retried, fmt.Sprintf("amount %d: %s %d", op.Amount, op.Outcome, op.Status))
			if op.Body != first.Body {
				t.Errorf("op %d retried another body than the indeterminate one: %s", op.ID, op.Body)
			}
		}
	}
	if len(retried) == 0 || h.Ops[len(h.Ops)-1].Outcome == history.Info {
		t.Errorf("retries at the end %v (ops %v): want the first body retried until it got a definitive answer", retried, purposes(h))
	}
}

// TestRun_RetryWithinStaysInsideItsBound: a probe with RetryWithin whose
// answer is indeterminate (the gateway fails it once) is re-sent until
// definitive, each re-send going out within its bound; with a bound
// already passed it is not re-sent.
func TestRun_RetryWithinStaysInsideItsBound(t *testing.T) {
	const ttl = 500 * time.Millisecond
	r := runnerOn(t, target.Policy{TTL: ttl, RecoveryWindow: 100 * time.Millisecond, MaxWait: 100 * time.Millisecond}, false)
	probe := func(within float64) scenarios.Scenario {
		return scenarios.Scenario{Name: "within", Family: "late-retry", Steps: []scenarios.Step{
			{Send: &scenarios.Send{ID: "first", Key: "k", Order: "o", Tenant: -1, Purpose: "first"}},
			{Wait: &scenarios.Wait{TTL: 0.5}},
			{Fault: &scenarios.Fault{ID: "once", Kind: "gateway:fail_before_charge", Order: "o", Params: map[string]string{"times": "1"}}},
			{Send: &scenarios.Send{ID: "last", Key: "k", Order: "o", Tenant: -1, Purpose: "late-retry@0.5xTTL", RetryWithin: within}},
			{Heal: "once"},
		}}
	}
	h := playComplete(t, r, probe(1.5))
	if len(h.Ops) < 3 || h.Ops[1].Outcome != history.Info || h.Ops[len(h.Ops)-1].Outcome == history.Info {
		t.Fatalf("ops %v: want the probe's indeterminate answer re-sent until definitive", outcomes(h))
	}
	for _, op := range h.Ops[2:] {
		if op.Purpose != h.Ops[1].Purpose {
			t.Errorf("op %d: %s, want only the probe's re-sends", op.ID, op.Purpose)
		}
		if since := op.Invoke - h.Ops[0].Invoke; since > 3*ttl/2 {
			t.Errorf("op %d re-sent %v after the first request, past its bound %v", op.ID, since, 3*ttl/2)
		}
	}
	h = playComplete(t, r, probe(0.1))
	if n := len(slices.DeleteFunc(purposes(h), func(p string) bool { return p != "late-retry@0.5xTTL" })); n != 1 || h.Ops[1].Outcome != history.Info {
		t.Errorf("ops %v: want the probe sent once, its bound already passed (the example's converging retries come after)", outcomes(h))
	}
}

func outcomes(h *history.History) []string {
	var out []string
	for _, op := range h.Ops {
		out = append(out, fmt.Sprintf("%s:%s/%d", op.Purpose, op.Outcome, op.Status))
	}
	return out
}
