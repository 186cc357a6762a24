package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/scenarios"
)

// Gate lets many examples share one environment without one example's
// faults reaching another's requests. Requests pass while no example is
// disrupting the environment; an example that disrupts it (a link fault, a
// gateway rule for every order, a kill, a pause, a restart) first waits
// until no other example has a request in flight, and keeps the others'
// requests out until its disruption is over. Waits (TTLs, recovery
// windows) hold nothing, so examples that mostly wait overlap freely.
// Faults aimed at one order (a decline, a slow gateway for that order, a
// hold) stay inside their example and need no gate.
type Gate struct {
	mu      sync.Mutex
	changed chan struct{}
	owner   *execution // disrupting example, if any
	// recovering is the example waiting out a recovery window after its
	// crashes (holdRecovery); relaunches waits for it to end, and waves
	// wait while relaunches is above zero.
	recovering *execution
	relaunches int // examples waiting to relaunch a replica (disruptMomentarily)
	inflight   map[*execution]int
	total      int
}

// NewGate makes an open gate.
func NewGate() *Gate { return &Gate{changed: make(chan struct{}), inflight: map[*execution]int{}} }

// await blocks until cond (called with g.mu held) holds, then runs then
// under the lock. Nothing passes once ctx has ended, also when cond came
// to hold at the same moment: a request held until the run's hard end
// (runner.Runner.HardEnd) is never sent. Its deadline is read from the
// clock, not only from ctx.Err: the example whose cut released the gate
// may run before the timer that ends this ctx has fired.
func (g *Gate) await(ctx context.Context, cond func() bool, then func()) error {
	for {
		if err := ended(ctx); err != nil {
			return fmt.Errorf("gate: %w", err)
		}
		g.mu.Lock()
		if ended(ctx) == nil && cond() {
			then()
			g.mu.Unlock()
			return nil
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("gate: %w", context.Cause(ctx))
		}
	}
}

// ended is ctx's error, or context.DeadlineExceeded once its deadline
// has passed even if the timer that ends ctx has not fired yet.
func ended(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// signal wakes every waiter; g.mu is held.
func (g *Gate) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// enter admits a request of p.
func (g *Gate) enter(ctx context.Context, p *execution) error {
	return g.await(ctx, func() bool { return g.owner == nil || g.owner == p }, func() {
		g.inflight[p]++
		g.total++
	})
}

// leave ends a request of p.
func (g *Gate) leave(p *execution) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight[p]--
	if g.inflight[p] == 0 {
		delete(g.inflight, p)
	}
	g.total--
	g.signal()
}

// disrupt makes p the disrupting example once no other example is, and
// waits until the other examples' requests have drained.
func (g *Gate) disrupt(ctx context.Context, p *execution) error {
	if err := g.await(ctx, func() bool { return g.owner == nil || g.owner == p }, func() { g.owner = p; g.signal() }); err != nil {
		return err
	}
	return g.drain(ctx, p)
}

// drain waits, p owning the gate, until the other examples' requests
// have drained; on error p gives the gate up.
func (g *Gate) drain(ctx context.Context, p *execution) error {
	err := g.await(ctx, func() bool { return g.total == g.inflight[p] }, func() {})
	if err != nil {
		g.restore(p)
	}
	return err
}

// A crash wave waits out one recovery window after its strikes and then
// retries its payments until they converge; the checker holds those
// answers only once every fault the wave lived through, its own or
// another example's, has healed and a recovery window has passed
// (live.go). A relaunch of a replica (a clock or a session zone moved:
// faults.Momentary) is such a fault, and in containers it takes 1-1.6 s:
// four of them from two late-retry examples, landing one after another
// in a wave's recovery, pushed its quiet time from 6.5 s to 14.7 s after
// its first request (reference --docker, seed 2), and on another run
// past the keys' 20 s promise, which left M6 UNKNOWN. So a wave holds
// the environment's recovery (holdRecovery) from its first step until
// its payments have converged, and a relaunch waits for it to end
// (disruptMomentarily); a wave does not start while a relaunch waits, so
// neither starves the other.

// holdRecovery makes p, a crash wave, the example whose recovery no
// relaunch may disturb, once no other holds it and no relaunch waits or
// is in progress.
func (g *Gate) holdRecovery(ctx context.Context, p *execution) error {
	return g.await(ctx, func() bool {
		return g.relaunches == 0 && (g.owner == nil || g.owner == p) && (g.recovering == nil || g.recovering == p)
	}, func() { g.recovering = p })
}

// endRecovery ends p's hold on the environment's recovery, if it had one.
func (g *Gate) endRecovery(p *execution) { g.vacate(&g.recovering, p) }

// disruptMomentarily is disrupt for a relaunch: it also waits until no
// other example's crash wave is recovering.
func (g *Gate) disruptMomentarily(ctx context.Context, p *execution) error {
	g.mu.Lock()
	g.relaunches++
	g.mu.Unlock()
	err := g.await(ctx, func() bool {
		return (g.owner == nil || g.owner == p) && (g.recovering == nil || g.recovering == p)
	}, func() { g.owner = p; g.relaunches--; g.signal() })
	if err != nil {
		g.mu.Lock()
		g.relaunches--
		g.signal()
		g.mu.Unlock()
		return err
	}
	return g.drain(ctx, p)
}

// recovers reports whether sc waits out a recovery window (a crash
// wave): it holds the environment's recovery while it plays.
func recovers(sc scenarios.Scenario) bool {
	return slices.ContainsFunc(sc.Steps, func(s scenarios.Step) bool { return s.Wait != nil && s.Wait.Recovery })
}

// restore ends p's disruption, if it had one.
func (g *Gate) restore(p *execution) { g.vacate(&g.owner, p) }

// vacate empties slot (the gate's owner or its recovering wave) if p
// holds it, and wakes the waiters.
func (g *Gate) vacate(slot **execution, p *execution) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if *slot == p {
		*slot = nil
		g.signal()
	}
}
