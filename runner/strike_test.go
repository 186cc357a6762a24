package runner_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/runner"
	"github.com/idemcheck/idemcheck/target"
)

// waveRunner starts the test server with env (its TESTSERVER_* knobs)
// under a policy with a short recovery window, and returns a Runner on it.
func waveRunner(t *testing.T, env map[string]string) *runner.Runner {
	return waveRunnerUnder(t, env, target.Policy{TTL: time.Hour, RecoveryWindow: 500 * time.Millisecond, MaxWait: time.Second})
}

func waveRunnerUnder(t *testing.T, env map[string]string, pol target.Policy) *runner.Runner {
	t.Helper()
	tg := harnesstest.Target(t, false, env)
	tg.Policy = pol
	e, tg := harnesstest.StartPrepared(t, tg, harness.Options{Replicas: 1})
	r := runner.New(runner.Config{Env: e, Target: tg, RunID: "wv", StopEarly: checker.MovedMoneyWrongly})
	t.Cleanup(r.Close)
	return r
}

// opsOf are the ops of the payment whose symbolic order is sym.
func opsOf(h *history.History, sym string) []history.Op {
	var out []history.Op
	for _, op := range h.Ops {
		if strings.HasSuffix(op.Order, "_"+sym) {
			out = append(out, op)
		}
	}
	return out
}

// TestRun_WaveStandsWhenAStrikeCannotHappen: against a server that
// answers every first request 409 without charging, the gateway never
// holds a charge, so no strike that waits for a hold (a kill, a pause, a
// store restart in the hold) can happen. The wave is played to its end
// all the same: no kill or pause is injected, the hold rules are healed,
// every payment is retried after recovery and converges, and the history
// is judged complete, with no crash point reached.
func TestRun_WaveStandsWhenAStrikeCannotHappen(t *testing.T) {
	r := waveRunner(t, map[string]string{"TESTSERVER_REFUSE_FIRST": "1"})
	pays := []families.CrashPayment{
		{Point: "kill-in-hang", Amount: 1250},
		{Point: "pause-in-hang", Amount: 1300},
		{Point: "charge-then-fail", Amount: 1400},
	}
	wave := families.CrashWave(pays)
	h := playComplete(t, r, wave)
	for _, f := range h.Faults {
		if f.Name == "kill" || f.Name == "pause" {
			t.Errorf("fault %d %s injected for a strike that could not happen", f.ID, f.Name)
		}
		if !f.Healed {
			t.Errorf("fault %d %s left active", f.ID, f.Name)
		}
	}
	for i := range pays {
		ops := opsOf(h, "o"+string(rune('0'+i)))
		if len(ops) < 2 || ops[0].Status != 409 {
			t.Fatalf("payment o%d: ops %+v, want its refused first request and its retries", i, ops)
		}
		if last := ops[len(ops)-1]; last.Status != 201 || last.Purpose != "retry-after-recovery" {
			t.Errorf("payment o%d: last op %d %s answered %d, want its retry after recovery charged", i, last.ID, last.Purpose, last.Status)
		}
	}
	var unstruck []string
	for _, u := range h.Unstruck {
		unstruck = append(unstruck, u.Point)
		if !strings.Contains(u.Why, "answered (status 409) before the gateway held a charge") {
			t.Errorf("%s left unstruck because %q", u.Point, u.Why)
		}
	}
	if strings.Join(unstruck, " ") != "kill-in-hang pause-in-hang" {
		t.Errorf("unstruck %v, want the two strikes that wait for a hold", unstruck)
	}
	res := checker.Check(h)
	if res.Coverage.Incomplete != 0 || res.Verdict == checker.Failed {
		t.Errorf("judged %s, incomplete %d:\n%s", res.Verdict, res.Coverage.Incomplete, res)
	}
	if len(res.Coverage.CrashPoints) != 0 {
		t.Errorf("crash points reached %v, want none: nothing was struck", res.Coverage.CrashPoints)
	}
}

// TestRun_PaymentLeftOutPastItsRoom: a payment whose strike would begin
// later than its Before after the wave's first request is left out whole
// (no fault, no request), and the rest of the wave is played.
func TestRun_PaymentLeftOutPastItsRoom(t *testing.T) {
	r := waveRunner(t, nil)
	wave := families.CrashWave([]families.CrashPayment{
		{Point: "fail-before-charge", Amount: 1250, By: time.Hour},
		{Point: "fail-before-charge", Amount: 1300, By: time.Nanosecond},
	})
	h := playComplete(t, r, wave)
	if ops := opsOf(h, "o1"); len(ops) != 0 {
		t.Errorf("payment o1, past its room, sent %d requests", len(ops))
	}
	for _, f := range h.Faults {
		if strings.HasSuffix(f.Order, "_o1") {
			t.Errorf("payment o1, past its room, got fault %d %s", f.ID, f.Name)
		}
	}
	ops := opsOf(h, "o0")
	if len(ops) < 2 || ops[len(ops)-1].Status != 201 {
		t.Fatalf("payment o0: ops %+v, want its strike and its retry charged", ops)
	}
	if len(h.Unstruck) != 1 || !strings.HasSuffix(h.Unstruck[0].Payment, "_o1") || h.Unstruck[0].Point != "fail-before-charge" || !strings.Contains(h.Unstruck[0].Why, "past the 0s its room leaves") {
		t.Errorf("unstruck %+v, want o1 at fail-before-charge, past its room", h.Unstruck)
	}
	if n := checker.Check(h).Coverage.CrashPoints["fail-before-charge"]; n != 1 {
		t.Errorf("fail-before-charge reached for %d payments, want 1", n)
	}
}

// TestRun_FinalRetriesInsideThePromise: when the policy leaves no room
// for the recovery window before a wave's final retries (Within), they
// are sent when Within has passed since the wave's first request, not a
// recovery window (here a minute) after its last heal.
func TestRun_FinalRetriesInsideThePromise(t *testing.T) {
	r := waveRunnerUnder(t, nil, target.Policy{TTL: time.Hour, RecoveryWindow: time.Minute, MaxWait: time.Second})
	within := 800 * time.Millisecond
	wave := families.CrashWave([]families.CrashPayment{{Point: "charge-then-fail", Amount: 1250, By: time.Hour, Within: within}})
	h := playComplete(t, r, wave)
	ops := opsOf(h, "o0")
	final := ops[len(ops)-1]
	if final.Purpose != "retry-after-recovery" || final.Status != 201 {
		t.Fatalf("last op %d %s answered %d, want the retry after recovery charged", final.ID, final.Purpose, final.Status)
	}
	// Within counts from when the first request was sent, a moment before
	// the client stamps it.
	if at := final.Invoke - ops[0].Invoke; at < within-100*time.Millisecond || at > within+5*time.Second {
		t.Errorf("final retry sent %s after the first request, want at %s, well before the recovery window", at, within)
	}
}
