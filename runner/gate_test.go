package runner

import (
	"context"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// within fails the test unless ch closes within d: a bounded wait on a
// condition, never a sleep.
func within(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: not within %s", what, d)
	}
}

// becomes closes its channel once cond, read under g's lock, holds; the
// caller bounds the wait (within).
func becomes(g *Gate, cond func() bool) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for {
			g.mu.Lock()
			ok := cond()
			g.mu.Unlock()
			if ok {
				close(ch)
				return
			}
			time.Sleep(time.Millisecond) // polling a condition, bounded by within
		}
	}()
	return ch
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestGate_DisruptionWaitsForOthersAndKeepsThemOut: a disrupting example
// waits until the others' requests have drained, its own requests pass,
// and the others' new requests wait until it restores the environment.
func TestGate_DisruptionWaitsForOthersAndKeepsThemOut(t *testing.T) {
	ctx := context.Background()
	g := NewGate()
	reader, disruptor, late := &execution{}, &execution{}, &execution{}
	if err := g.enter(ctx, reader); err != nil {
		t.Fatal(err)
	}
	if err := g.enter(ctx, disruptor); err != nil { // its own request in flight (a held charge)
		t.Fatal(err)
	}
	owned := make(chan struct{})
	go func() {
		if err := g.disrupt(ctx, disruptor); err != nil {
			t.Error(err)
		}
		close(owned)
	}()
	within(t, becomes(g, func() bool { return g.owner == disruptor }), 5*time.Second, "disruptor claims the gate")
	if closed(owned) {
		t.Fatal("disruption began while another example's request was in flight")
	}
	lateIn := make(chan struct{})
	go func() {
		if err := g.enter(ctx, late); err != nil {
			t.Error(err)
		}
		close(lateIn)
	}()
	g.leave(reader)
	within(t, owned, 5*time.Second, "disruption after the other request drained")
	if err := g.enter(ctx, disruptor); err != nil { // its own requests still pass
		t.Fatal(err)
	}
	g.leave(disruptor)
	if closed(lateIn) {
		t.Fatal("another example's request entered during the disruption")
	}
	g.restore(disruptor)
	within(t, lateIn, 5*time.Second, "the waiting request after the restore")
	g.leave(late)
	g.leave(disruptor)
	if g.total != 0 || len(g.inflight) != 0 || g.owner != nil {
		t.Fatalf("gate not empty: total %d inflight %v owner %v", g.total, g.inflight, g.owner)
	}
}

// TestGate_CancelledWaitGivesUp: a request waiting at the gate returns its
// context's error instead of hanging.
func TestGate_CancelledWaitGivesUp(t *testing.T) {
	g := NewGate()
	owner, other := &execution{}, &execution{}
	if err := g.disrupt(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.enter(ctx, other); err == nil {
		t.Fatal("entered a disrupted gate")
	}
	g.restore(owner)
	if err := g.enter(context.Background(), other); err != nil {
		t.Fatal(err)
	}
}

// planOf builds the faults of sc's steps as an example of it would.
func planOf(sc scenarios.Scenario) []stepFault {
	p := &execution{r: New(Config{Target: &target.Target{}}), sc: sc, nonce: "n"}
	return p.planFaults()
}

// TestDisruptive_Spans: only steps whose fault reaches beyond its own
// payment make a scenario disruptive, up to its last one.
func TestDisruptive_Spans(t *testing.T) {
	r := 0
	order := scenarios.Scenario{Steps: []scenarios.Step{{Fault: &scenarios.Fault{ID: "d", Kind: "gateway:decline", Order: "o"}}, {Send: &scenarios.Send{Key: "k", Order: "o"}}, {Heal: "d"}}}
	if _, ok := disruptive(planOf(order)); ok {
		t.Error("a fault aimed at one order disrupts nothing else")
	}
	wave := scenarios.Scenario{Steps: []scenarios.Step{{Fault: &scenarios.Fault{ID: "h", Kind: "gateway:charge_then_hang", Order: "o"}}, {Kill: &r}, {Restart: &r}, {Heal: "h"}, {Wait: &scenarios.Wait{Recovery: true}}}}
	if last, ok := disruptive(planOf(wave)); !ok || last != 2 {
		t.Errorf("wave: last disruptive step %d (%v), want 2 (the restart)", last, ok)
	}
	// A clock moved by relaunching a replica holds the gate for its
	// inject and its heal alone, not for the wait to the retry between.
	clock := scenarios.Scenario{Steps: []scenarios.Step{
		{Fault: &scenarios.Fault{ID: "clock", Kind: "clock_skew", Replica: &r, Params: map[string]string{"offset": "+2s"}}},
		{Send: &scenarios.Send{Key: "k", Order: "o"}}, {Wait: &scenarios.Wait{TTL: 0.8}}, {Send: &scenarios.Send{Key: "k", Order: "o"}},
		{Heal: "clock"}}}
	if last, ok := disruptive(planOf(clock)); ok {
		t.Errorf("clock: disruptive up to step %d, want no span", last)
	}
	for i, want := range []bool{true, false, false, false, true} {
		if got := planOf(clock)[i].momentary(); got != want {
			t.Errorf("clock: step %d (%s) momentary %v, want %v", i, clock.Steps[i], got, want)
		}
	}
}

// TestGate_RelaunchWaitsForARecoveringWave: a relaunch (a moved clock or
// zone) waits while a crash wave recovers, and takes the gate once the
// wave ends; a second wave does not start while that relaunch waits.
func TestGate_RelaunchWaitsForARecoveringWave(t *testing.T) {
	ctx := context.Background()
	g := NewGate()
	wave, relauncher, next := &execution{}, &execution{}, &execution{}
	if err := g.holdRecovery(ctx, wave); err != nil {
		t.Fatal(err)
	}
	if err := g.disrupt(ctx, wave); err != nil { // the wave's strikes
		t.Fatal(err)
	}
	g.restore(wave) // strikes over: the wave waits out its recovery window
	relaunched := make(chan struct{})
	go func() {
		if err := g.disruptMomentarily(ctx, relauncher); err != nil {
			t.Error(err)
		}
		close(relaunched)
	}()
	within(t, becomes(g, func() bool { return g.relaunches == 1 }), 5*time.Second, "the relaunch waits")
	if closed(relaunched) {
		t.Fatal("a replica was relaunched during a crash wave's recovery")
	}
	nextHeld := make(chan struct{})
	go func() {
		if err := g.holdRecovery(ctx, next); err != nil {
			t.Error(err)
		}
		close(nextHeld)
	}()
	g.endRecovery(wave)
	within(t, relaunched, 5*time.Second, "the relaunch after the wave recovered")
	if closed(nextHeld) {
		t.Fatal("the next wave started while a relaunch waited")
	}
	g.restore(relauncher)
	within(t, nextHeld, 5*time.Second, "the next wave after the relaunch")
	// A relaunch given up (its context ended) stops holding waves back.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := g.disruptMomentarily(cctx, relauncher); err == nil {
		t.Fatal("relaunched during a wave's recovery with its context ended")
	}
	g.endRecovery(next)
	if err := g.holdRecovery(ctx, wave); err != nil {
		t.Fatal(err)
	}
	if g.relaunches != 0 || g.owner != nil || g.recovering != wave {
		t.Fatalf("gate: relaunches %d owner %v recovering %v", g.relaunches, g.owner, g.recovering)
	}
}

// TestRecovers: only a scenario that waits out a recovery window holds it.
func TestRecovers(t *testing.T) {
	if recovers(scenarios.Scenario{Steps: []scenarios.Step{{Wait: &scenarios.Wait{TTL: 1}}}}) {
		t.Error("a TTL wait holds no recovery")
	}
	if !recovers(scenarios.Scenario{Steps: []scenarios.Step{{Send: &scenarios.Send{Key: "k"}}, {Wait: &scenarios.Wait{Recovery: true}}}}) {
		t.Error("a crash wave holds the recovery")
	}
}

// TestPlan_ProcessStepsAreReplicaFaults: kill, pause, restart and resume
// steps are faults of replica scope (a restart of a killed replica heals
// its kill, a resume its pause), a gateway rule for one order is of
// payment scope, and kill_in_hang, though aimed at an order, reaches its
// replica.
func TestPlan_ProcessStepsAreReplicaFaults(t *testing.T) {
	r := 1
	sc := scenarios.Scenario{Steps: []scenarios.Step{
		{Kill: &r}, {Restart: &r}, {Restart: &r}, {Pause: &r}, {Resume: &r},
		{Fault: &scenarios.Fault{ID: "d", Kind: "gateway:decline", Order: "o"}},
		{Fault: &scenarios.Fault{ID: "k", Kind: "kill_in_hang", Replica: &r, Order: "o"}},
		{Heal: "k"},
	}}
	plan := planOf(sc)
	for i, want := range []struct {
		id      string
		heal    bool
		reaches bool
	}{
		{"kill:replica1", false, true}, {"kill:replica1", true, true}, {"restart:replica1", false, true},
		{"pause:replica1", false, true}, {"pause:replica1", true, true},
		{"d", false, false}, {"k", false, true}, {"k", true, true},
	} {
		if got := plan[i]; got.err != nil || got.id != want.id || got.heal != want.heal || got.reaches() != want.reaches {
			t.Errorf("step %d (%s): id %q heal %v reaches %v (err %v), want %q %v %v", i, sc.Steps[i], got.id, got.heal, got.reaches(), got.err, want.id, want.heal, want.reaches)
		}
	}
	if last, ok := disruptive(plan); !ok || last != 7 {
		t.Errorf("disruptive up to step %d (%v), want 7, the heal of kill_in_hang", last, ok)
	}
}
