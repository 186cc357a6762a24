package runner_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// killInHangSteps is the crash-window's own kill-in-hang, as the family
// writes it: a hang rule for the order, the send, a kill step inside the
// hold, the release, the restart.
func killInHangSteps() scenarios.Scenario {
	r := 0
	return scenarios.Scenario{Name: "kill-in-hang-as-steps", Family: "crash-window", Steps: []scenarios.Step{
		{Fault: &scenarios.Fault{ID: "hang", Kind: "gateway:charge_then_hang", Order: "o1"}},
		{Send: &scenarios.Send{ID: "first", Client: 0, Replica: 0, Tenant: 0, Key: "k1", Order: "o1", Amount: 1250, Async: true, Purpose: "first"}},
		{Wait: &scenarios.Wait{Hold: "o1"}},
		{Kill: &r},
		{Release: "o1"},
		{Wait: &scenarios.Wait{Responses: []string{"first"}}},
		{Restart: &r},
		{Heal: "hang"},
		{Wait: &scenarios.Wait{Recovery: true}},
		{Send: &scenarios.Send{ID: "retry", Client: 1, Replica: 0, Tenant: 0, Key: "k1", Order: "o1", Amount: 1250, Purpose: "retry-after-recovery", Converge: true}},
	}}
}

// TestRun_KillInHangFromAFile: a scenario file that names kill_in_hang
// (aimed at its order with the fault's order field) loads, plays, and is
// judged as the crash-window's own kill-in-hang is; the kill reaches the
// replica, not only the order, so an example in flight at the time (on
// another order, waiting to retry) records it as a foreign fault, healed
// when the replica is back: the two examples share one fault.
func TestRun_KillInHangFromAFile(t *testing.T) {
	sc, err := scenarios.LoadIncident("testdata/kill-in-hang.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := runnerOn(t, target.Policy{TTL: time.Hour, RecoveryWindow: time.Second, MaxWait: time.Second}, true, gated)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// The bystander pays, waits through the other example's crash, and
	// retries: it is in flight for the whole kill.
	bystander := scenarios.Scenario{Name: "bystander", Family: "late-retry", Steps: []scenarios.Step{
		{Send: &scenarios.Send{ID: "a", Key: "kb", Order: "ob", Tenant: 0, Purpose: "first"}},
		{Wait: &scenarios.Wait{For: 4 * time.Second}},
		{Send: &scenarios.Send{ID: "b", Key: "kb", Order: "ob", Tenant: 0, Purpose: "retry", Converge: true}},
	}}
	type played struct {
		h   *history.History
		err error
	}
	done := make(chan played, 1)
	go func() {
		h, err := r.Run(ctx, bystander)
		done <- played{h, err}
	}()
	if _, err := r.Ledger().Feed().WaitOrder(ctx, "ord_rn1_ob", "charge"); err != nil {
		t.Fatalf("the bystander's payment never reached the gateway: %v", err)
	}

	fromFile := playComplete(t, r, *sc)
	by := <-done
	if by.err != nil || !by.h.Complete {
		t.Fatalf("bystander: %v (complete %v)", by.err, by.h.Complete)
	}

	kill := func(h *history.History, foreign bool) *history.Fault {
		i := slices.IndexFunc(h.Faults, func(f history.Fault) bool { return f.Name == "kill" && (f.Foreign != "") == foreign })
		if i < 0 {
			return nil
		}
		return &h.Faults[i]
	}
	own := kill(fromFile, false)
	if own == nil || !own.HasFired() || !own.Healed || own.Scope != history.Replica || own.Order != fromFile.Ops[0].Order {
		t.Fatalf("the file's example: kill %+v, want its own kill of the replica, aimed at its order, fired and healed (faults %+v)", own, fromFile.Faults)
	}
	shared := kill(by.h, true)
	if shared == nil || !shared.Healed || shared.Foreign == "" {
		t.Fatalf("bystander: faults %+v, want the other example's kill, foreign and healed", by.h.Faults)
	}
	if res := checker.Check(by.h); res.Failed() || res.Coverage.CrashFaults != 0 {
		t.Errorf("bystander: FAILED %v, crash coverage %d: a foreign kill is excused, never its coverage", res.Failed(), res.Coverage.CrashFaults)
	}

	// Judged like the family's own kill-in-hang, check by check.
	asSteps := playComplete(t, r, killInHangSteps())
	a, b := checker.Check(fromFile), checker.Check(asSteps)
	for _, id := range checker.CheckIDs() {
		x, _ := a.Find(id)
		y, _ := b.Find(id)
		if x.Verdict != y.Verdict {
			t.Errorf("%s: %s from the file, %s as the family's steps", id, x.Verdict, y.Verdict)
		}
	}
	if m1, _ := a.Find("M1"); m1.Verdict != checker.Pass || a.Coverage.CrashFaults == 0 {
		t.Errorf("from the file: M1 %s, crash coverage %d; want PASS with the kill counted", m1.Verdict, a.Coverage.CrashFaults)
	}
}
