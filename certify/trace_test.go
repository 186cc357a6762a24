package certify_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// withFlags is tg with more reference-server flags.
func withFlags(tg *target.Target, flags ...string) *target.Target {
	in := *tg
	in.Start.Args = append(append([]string(nil), tg.Start.Args...), flags...)
	return &in
}

// A server is taken as it is: wherever it names the order at the
// gateway (a metadata key of its own, the description, nowhere), first
// contact finds it, the reference's crash recovery still passes, and a
// check-then-act server's double charge is still found.
func TestTrace_MoneyTracedWhereverTheServerNamesTheOrder(t *testing.T) {
	dir := binDir(t)
	sc, err := scenarios.ParseIncident("e2e.yaml", []byte(e2eScenario))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ at, trace string }{
		{"metadata[shop_order]", "metadata[shop_order]"},
		{"description", "description:Order {order_id}"},
		{"none", "amount"},
	} {
		t.Run(c.at, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			ref, err := certify.Replay(ctx, withFlags(member(t, "reference", dir), "--gateway-order="+c.at), sc, certify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if ex := ref; ex.Err != nil || len(ex.History.Charges) == 0 {
				t.Fatalf("reference: played %v, %d charges attributed; want the scenario's charges", ex.Err, len(ex.History.Charges))
			}
			for _, ch := range ref.Result.Checks {
				if !ch.Verdict.Acceptable() {
					t.Errorf("reference naming the order %s: %s %s: %v %s", c.at, ch.ID, ch.Verdict, ch.Violations, ch.Note)
				}
			}
			if n := succeeded(ref, "o_crash"); n != 1 {
				t.Errorf("reference: crash order charged %d times, want 1", n)
			}
			naive, err := certify.Replay(ctx, withFlags(member(t, "naive", dir), "--gateway-order="+c.at), sc, certify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if m1, _ := naive.Result.Find("M1"); m1.Verdict != checker.Failed {
				t.Errorf("naive naming the order %s: M1 %s, want FAILED; %s", c.at, m1.Verdict, m1.Note)
			}
		})
	}
}

// A server that never reaches the gateway stops at first contact: exit
// 3's error, the checklist in the report, and no check judged.
func TestTrace_FirstContactStopsAMisconfiguredTarget(t *testing.T) {
	dir := binDir(t)
	tg := member(t, "reference", dir)
	tg.Start.Env["GATEWAY_URL"] = "http://127.0.0.1:9"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := certify.Run(ctx, tg, certify.Options{Budget: 30 * time.Second})
	if !errors.Is(err, certify.ErrFirstContact) || !errors.Is(err, certify.ErrEnvironment) {
		t.Fatalf("err = %v, want ErrFirstContact (an environment error, exit 3)", err)
	}
	it, blocked := rep.Contact.Blocking()
	if !blocked || it.Check != "the charge reached the gateway" || len(it.Fix) == 0 {
		t.Fatalf("checklist's blocking item = %+v (blocked %v), want the charge that never reached the gateway, with its fix", it, blocked)
	}
	if len(rep.Checks) != 0 || len(rep.Violations) != 0 || rep.Verdict == "fail" {
		t.Fatalf("a stopped run judged %d checks, %d violations, verdict %s; want none", len(rep.Checks), len(rep.Violations), rep.Verdict)
	}
}
