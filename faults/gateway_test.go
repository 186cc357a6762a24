package faults_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// ledgerFor is the gateway's ledger entries for one order.
func ledgerFor(env *testEnv, order string) []gatewaysim.Charge {
	var out []gatewaysim.Charge
	for _, c := range env.proc.Gateway().Ledger() {
		if c.OrderID == order {
			out = append(out, c)
		}
	}
	return out
}

func chargeID(t *testing.T, r result) string {
	t.Helper()
	var body struct{ ID string }
	if err := json.Unmarshal([]byte(r.body), &body); err != nil || body.ID == "" {
		t.Fatalf("no charge id in %q: %v", r.body, err)
	}
	return body.ID
}

func TestGateway_FaultsActOnTheirOrderOnly(t *testing.T) {
	cases := []struct {
		fault      func(m gatewaysim.Match) *faults.Gateway
		name       string
		wantStatus int
		wantLedger int // ledger entries for the order after the faulted request
	}{
		{faults.Decline, "gateway:decline", 402, 1},
		{faults.FailBeforeCharge, "gateway:fail_before_charge", 502, 0},
		{faults.ChargeThenFail, "gateway:charge_then_fail", 502, 1},
		{faults.ChargeThenDrop, "gateway:charge_then_drop", 502, 1},
	}
	env := newEnv(t, false)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			order := "ord_" + tc.name[len("gateway:"):]
			heal := apply(t, env, tc.fault(gatewaysim.Match{OrderID: order}))
			r := charge(env.ReplicaURL(0), "k_"+order, order, 10*time.Second)
			if r.status != tc.wantStatus || len(ledgerFor(env, order)) != tc.wantLedger {
				t.Fatalf("faulted charge = %d %s, ledger %+v; want %d and %d entries", r.status, r.body, ledgerFor(env, order), tc.wantStatus, tc.wantLedger)
			}
			mustOK(t, "another order", charge(env.ReplicaURL(0), "k_other_"+order, "other_"+order, 10*time.Second))
			mustHeal(t, heal)
			if f := recorded(env, tc.name); len(f) != 1 || f[0].Order != order || !f[0].Healed || f[0].Target != "gateway" {
				t.Errorf("history = %+v", f)
			}
		})
	}
}

func TestGateway_ChargeThenFailIsReplayedOnRetry(t *testing.T) {
	env := newEnv(t, false)
	heal := apply(t, env, faults.ChargeThenFail(gatewaysim.Match{OrderID: "ord_ctf"}))
	if r := charge(env.ReplicaURL(0), "k_ctf", "ord_ctf", 10*time.Second); r.status != 502 {
		t.Fatalf("first try = %d %s", r.status, r.body)
	}
	mustHeal(t, heal)
	r := charge(env.ReplicaURL(0), "k_ctf", "ord_ctf", 10*time.Second)
	mustOK(t, "retry", r)
	if l := ledgerFor(env, "ord_ctf"); len(l) != 1 || l[0].ID != chargeID(t, r) {
		t.Errorf("retry answered %s, ledger %+v: want the one committed charge replayed", r.body, l)
	}
	if f := env.rec.Snapshot(false).Faults; len(f) != 1 || f[0].Fired != 0 {
		t.Errorf("recorded faults = %+v: want one gateway rule, armed (its firing is the ledger feed's to stamp)", f)
	}
}

func TestGateway_ChargeThenHangHoldsUntilHealed(t *testing.T) {
	env := newEnv(t, false)
	heal := apply(t, env, faults.ChargeThenHang(gatewaysim.Match{OrderID: "ord_hang"}))
	pending := make(chan result, 1)
	go func() { pending <- charge(env.ReplicaURL(0), "k_hang", "ord_hang", 20*time.Second) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := env.proc.Gateway().WaitEvent(ctx, func(ev gatewaysim.Event) bool { return ev.Type == gatewaysim.EventHold }); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-pending:
		t.Fatalf("request completed during the hold: %d %s", r.status, r.body)
	default:
	}
	mustHeal(t, heal)
	mustOK(t, "released request", <-pending)
	if len(env.proc.Gateway().Holds()) != 0 || len(env.proc.Gateway().Faults()) != 0 {
		t.Errorf("after heal: holds %+v, faults %+v", env.proc.Gateway().Holds(), env.proc.Gateway().Faults())
	}
}

func TestGateway_SlowDelaysTheDecision(t *testing.T) {
	env := newEnv(t, false)
	heal := apply(t, env, faults.Slow(gatewaysim.Match{OrderID: "ord_slow"}, delay))
	defer mustHeal(t, heal)
	r := charge(env.ReplicaURL(0), "k_slow", "ord_slow", 10*time.Second)
	mustOK(t, "slow charge", r)
	if r.elapsed < delay {
		t.Errorf("slow charge took %s, want >= %s", r.elapsed, delay)
	}
	if f := recorded(env, "gateway:slow"); len(f) != 1 || f[0].Params["latency"] != delay.String() {
		t.Errorf("history = %+v", f)
	}
}

func TestKillInHang_KillsInsideTheWindowAndTheRetryIsReplayed(t *testing.T) {
	env := newEnv(t, false)
	const order = "ord_crash"
	healHang := apply(t, env, faults.ChargeThenHang(gatewaysim.Match{OrderID: order, Nth: 0}))
	pending := make(chan result, 1)
	go func() { pending <- charge(env.ReplicaURL(0), "k_crash", order, 20*time.Second) }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	healKill, err := faults.KillInHang(ctx, env, 0, order)
	if err != nil {
		t.Fatal(err)
	}
	if r := <-pending; r.err == nil {
		t.Fatalf("the client of a replica killed mid-charge got an answer: %d %s", r.status, r.body)
	}
	if env.proc.Running(0) || len(env.proc.Gateway().Holds()) != 0 || len(ledgerFor(env, order)) != 1 {
		t.Fatalf("after KillInHang: running %v, holds %+v, ledger %+v", env.proc.Running(0), env.proc.Gateway().Holds(), ledgerFor(env, order))
	}
	kill := recorded(env, "kill")
	if len(kill) != 1 || kill[0].Order != order || kill[0].Params["hold"] == "" {
		t.Errorf("kill history = %+v, want the order and hold", kill)
	}

	mustHeal(t, healHang)
	mustHeal(t, healKill)
	r := charge(env.ReplicaURL(0), "k_crash", order, 10*time.Second)
	mustOK(t, "retry after restart", r)
	if chargeID(t, r) != ledgerFor(env, order)[0].ID || len(ledgerFor(env, order)) != 1 {
		t.Errorf("retry = %s, ledger %+v: want the held charge replayed", r.body, ledgerFor(env, order))
	}
}

func TestCrashInHang_FromASpec(t *testing.T) {
	env := newEnv(t, false)
	f, err := faults.Parse("kill_in_hang:replica0:order=ord_spec")
	if err != nil {
		t.Fatal(err)
	}
	heal := apply(t, env, f)
	if r := charge(env.ReplicaURL(0), "k_spec", "ord_spec", 20*time.Second); r.err == nil {
		t.Fatalf("request answered %d %s although its replica was killed in the hold", r.status, r.body)
	}
	mustHeal(t, heal)
	if !env.proc.Running(0) || len(env.proc.Gateway().Faults()) != 0 || len(env.proc.Gateway().Holds()) != 0 {
		t.Fatalf("after heal: running %v faults %+v holds %+v", env.proc.Running(0), env.proc.Gateway().Faults(), env.proc.Gateway().Holds())
	}
	composite, kill := recorded(env, "kill_in_hang"), recorded(env, "kill")
	if len(composite) != 1 || !composite[0].Healed || composite[0].Order != "ord_spec" || len(kill) != 1 || !kill[0].Healed {
		t.Errorf("history: kill_in_hang %+v, kill %+v", composite, kill)
	}
	if kill[0].Inject < composite[0].Inject || kill[0].Heal > composite[0].Heal {
		t.Errorf("the kill %+v is not inside the composite fault's window %+v", kill[0], composite[0])
	}
	mustOK(t, "retry", charge(env.ReplicaURL(0), "k_spec", "ord_spec", 10*time.Second))
}

func TestCrashInHang_HealBeforeTheRequestDisarms(t *testing.T) {
	env := newEnv(t, false)
	heal := apply(t, env, &faults.CrashInHang{Replica: 0, OrderID: "ord_never"})
	mustHeal(t, heal)
	if !env.proc.Running(0) || len(recorded(env, "kill")) != 0 || len(env.proc.Gateway().Faults()) != 0 {
		t.Errorf("a disarmed crash killed or left a rule: running %v, kills %+v", env.proc.Running(0), recorded(env, "kill"))
	}
}
