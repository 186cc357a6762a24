package runner

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"slices"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// play appends s to p's scenario and plays it as its next step, as Run
// would (its fault built with the others).
func play(ctx context.Context, p *execution, s scenarios.Step) error {
	p.sc.Steps = append(p.sc.Steps, s)
	p.plan = p.planFaults()
	return p.step(ctx, len(p.sc.Steps)-1, s)
}

// foreign returns the faults of h that another example injected.
func foreign(h *history.History) []history.Fault {
	var out []history.Fault
	for _, f := range h.Faults {
		if f.Foreign != "" {
			out = append(out, f)
		}
	}
	return out
}

// inFlight starts an example of r named name, in flight until the test
// ends, as Run would.
func inFlight(t *testing.T, r *Runner, name string) *execution {
	p := r.newPlay(scenarios.Scenario{Name: name, Family: "crash-window"})
	t.Cleanup(func() { p.client.Close() })
	r.enter(p)
	t.Cleanup(func() { r.exit(p) })
	return p
}

// TestShared_ExamplesLiveThroughEachOthersKills: a replica killed and
// restarted by one example is recorded, marked Foreign, in every other
// example in flight (one already waiting, one that starts while the
// replica is down), healed when the restart is; a fault aimed at one
// order stays in its example; an example that has ended records nothing
// more. The waiting example's converging retry then keeps trying until a
// recovery window and the slack after the foreign restart, not its own
// heal (the correct reference was FAILED on M6 when another crash wave
// killed a replica mid-recovery), and the checker does not count the
// foreign kill as the example's coverage.
func TestShared_ExamplesLiveThroughEachOthersKills(t *testing.T) {
	r := gatedRunner(t, target.Policy{TTL: time.Hour, RecoveryWindow: 500 * time.Millisecond, MaxWait: 100 * time.Millisecond}, "shared")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	start := func(name string) *execution { return inFlight(t, r, name) }
	waiter, killer, ended := start("waiter"), start("killer"), start("ended")
	defer waiter.cleanup(ctx)
	defer killer.cleanup(ctx)
	r.exit(ended)

	// The waiter's own order-scoped fault, healed: its window would count
	// from here, and the others never see it.
	if err := play(ctx, waiter, scenarios.Step{Fault: &scenarios.Fault{ID: "brief", Kind: "gateway:fail_before_charge", Order: "o0"}}); err != nil {
		t.Fatal(err)
	}
	if err := waiter.heal(ctx, "brief"); err != nil {
		t.Fatal(err)
	}
	if err := play(ctx, waiter, scenarios.Step{Fault: &scenarios.Fault{ID: "stuck", Kind: "gateway:fail_before_charge", Order: "o1"}}); err != nil {
		t.Fatal(err)
	}
	zero := 0
	if err := play(ctx, killer, scenarios.Step{Kill: &zero}); err != nil {
		t.Fatal(err)
	}
	latecomer := start("latecomer") // starts while the replica is down
	// The replica stays down a while (the subject: a disruption longer
	// than the waiter's own window and slack would cover from its heal).
	killer.sleepUntil(ctx, time.Now().Add(1500*time.Millisecond))
	if err := play(ctx, killer, scenarios.Step{Restart: &zero}); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()

	for _, c := range []struct {
		p    *execution
		want int
	}{{waiter, 1}, {latecomer, 1}, {killer, 0}, {ended, 0}} {
		fs := foreign(c.p.rec.Snapshot(false))
		if len(fs) != c.want {
			t.Fatalf("%s: %d foreign faults %+v, want %d", c.p.sc.Name, len(fs), fs, c.want)
		}
		if c.want == 1 && (fs[0].Name != "kill" || fs[0].Foreign != killer.nonce || !fs[0].Healed || fs[0].Fired == 0) {
			t.Errorf("%s: foreign fault %+v, want the killer's kill, fired and healed", c.p.sc.Name, fs[0])
		}
	}
	if n := len(killer.rec.Snapshot(false).Faults); n != 1 {
		t.Errorf("killer: %d faults, want its kill only (the waiter's order-scoped faults stay in the waiter)", n)
	}

	// The waiter waits its window: from the foreign restart, not its heal.
	pol := r.cfg.Target.Policy
	if err := waiter.wait(ctx, scenarios.Wait{Recovery: true}); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(restarted); waited < pol.RecoveryWindow {
		t.Errorf("recovery window waited until %v after the foreign restart, want %v", waited, pol.RecoveryWindow)
	}
	// Another kill as the window ends: the converging retry's deadline
	// moves to a window and the slack after that restart.
	if err := play(ctx, killer, scenarios.Step{Kill: &zero}); err != nil {
		t.Fatal(err)
	}
	killer.sleepUntil(ctx, time.Now().Add(1500*time.Millisecond))
	if err := play(ctx, killer, scenarios.Step{Restart: &zero}); err != nil {
		t.Fatal(err)
	}
	restarted = time.Now()
	req, _, err := waiter.request(scenarios.Send{Key: "k1", Order: "o1", Tenant: -1, Purpose: "retry-after-recovery"})
	if err != nil {
		t.Fatal(err)
	}
	last := waiter.retry(ctx, req, waiter.convergeDeadline())
	h := waiter.rec.Snapshot(false)
	kills := foreign(h)
	if len(kills) != 2 || !kills[1].Healed {
		t.Fatalf("waiter's foreign faults %+v, want both kills, healed", kills)
	}
	quiet := kills[1].Heal + pol.RecoveryWindow
	if !slices.ContainsFunc(h.Ops, func(op history.Op) bool { return op.Invoke >= quiet }) || last.Outcome != history.Info {
		t.Errorf("no try sent a recovery window after the second foreign restart (last %s %d): the deadline did not move", last.Outcome, last.Status)
	}
	if late := time.Since(restarted); late < pol.RecoveryWindow+pol.ConvergeSlack()-time.Second {
		t.Errorf("retried for %v after the second foreign restart: want until about its window and slack, %v", late, pol.RecoveryWindow+pol.ConvergeSlack())
	}

	res := checker.Check(h)
	if res.Coverage.CrashFaults != 0 || res.Coverage.Faults != 2 || len(res.Coverage.CrashPoints) != 0 {
		t.Errorf("coverage %+v: the foreign kill counted as the waiter's own", res.Coverage)
	}
}

// TestShared_ClientLinkHealDropsPooledConnections: once a fault on the
// harness's own link to a replica heals, every example that lived
// through it sends its next request on a new connection: toxiproxy
// closed the link's connections, and one left in the pool failed the
// next request with EOF (a soak's other families got such an answer
// after nearly every drop-client-in-hang). A fault on another link
// leaves the pool alone, so the test sees reuse where there is some.
func TestShared_ClientLinkHealDropsPooledConnections(t *testing.T) {
	r := gatedRunner(t, target.Policy{TTL: time.Hour, RecoveryWindow: 100 * time.Millisecond, MaxWait: 100 * time.Millisecond}, "pool")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	start := func(name string) *execution { return inFlight(t, r, name) }
	sender, faulter := start("sender"), start("faulter")
	defer sender.cleanup(ctx)
	defer faulter.cleanup(ctx)
	n := 0
	// reused sends one request of sender and says whether it went out on
	// a pooled connection.
	reused := func() bool {
		t.Helper()
		n++
		var got httptrace.GotConnInfo
		tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { got = i }})
		req, _, err := sender.request(scenarios.Send{Key: fmt.Sprintf("k%d", n), Order: fmt.Sprintf("o%d", n), Tenant: -1, Replica: 0, Purpose: "first"})
		if err != nil {
			t.Fatal(err)
		}
		if op := sender.do(tctx, req); op.Outcome != history.OK {
			t.Fatalf("request %d: %s %d %s", n, op.Outcome, op.Status, op.Error)
		}
		return got.Reused
	}
	latency := func(id, link string) {
		t.Helper()
		if err := play(ctx, faulter, scenarios.Step{Fault: &scenarios.Fault{ID: id, Kind: "latency", Link: link, Params: map[string]string{"latency": "1ms"}}}); err != nil {
			t.Fatal(err)
		}
		if err := faulter.heal(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	reused() // a connection into the pool
	latency("gw", "replica0->gateway")
	if !reused() {
		t.Fatal("after a fault on the gateway link the pooled connection was not reused: the test cannot see reuse")
	}
	latency("cl", "client->replica0")
	if reused() {
		t.Error("after a fault on the client's link healed, the next request went out on a pooled connection")
	}
	if fs := foreign(sender.rec.Snapshot(false)); len(fs) != 2 {
		t.Errorf("sender lived through %d foreign faults, want both", len(fs))
	}
}
