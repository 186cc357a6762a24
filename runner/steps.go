package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/scenarios"
)

func (p *execution) steps(ctx context.Context) error {
	last, disrupts := disruptive(p.plan)
	if disrupts && p.r.cfg.Gate != nil {
		if err := p.r.cfg.Gate.disrupt(ctx, p); err != nil {
			return err
		}
	}
	for i, s := range p.sc.Steps {
		if probe := s.Wait != nil && s.Wait.TTL > 0; probe && p.failedSoFar(ctx) {
			break // the probes still to come cannot undo a failure
		} else if probe && p.pastStop(*s.Wait) {
			p.r.count(p.sc.Family, func(c *Cuts) { c.Probing++ })
			break // the run's budget ends before this probe would be sent
		}
		alone := i > last && p.r.cfg.Gate != nil && p.plan[i].momentary()
		if alone {
			if err := p.r.cfg.Gate.disruptMomentarily(ctx, p); err != nil {
				return fmt.Errorf("step %d (%s): %w", i, s, err)
			}
		}
		if err := p.step(ctx, i, s); err != nil {
			return fmt.Errorf("step %d (%s): %w", i, s, err)
		}
		if (i == last || alone) && p.r.cfg.Gate != nil {
			p.r.cfg.Gate.restore(p)
		}
	}
	return p.collect(ctx, []string{"*"})
}

func (p *execution) step(ctx context.Context, i int, s scenarios.Step) error {
	if p.leftOut(s) {
		return nil
	}
	if s.Point != "" {
		p.labels.set(map[string]string{history.ParamCrashPoint: s.Point, history.ParamCrashPayment: p.realOrder(s.Payment)})
		defer p.labels.set(nil)
	}
	switch {
	case s.Send != nil:
		return p.send(ctx, *s.Send)
	case s.Wait != nil:
		return p.wait(ctx, *s.Wait)
	case s.Heal != "":
		return p.heal(ctx, s.Heal)
	case s.Release != "":
		return p.release(ctx, s.Release)
	}
	return p.fault(ctx, p.plan[i])
}

// pastStop says whether waiting w would end after StopProbing.
func (p *execution) pastStop(w scenarios.Wait) bool {
	return !p.r.cfg.StopProbing.IsZero() && p.ttlWaitEnd(w).After(p.r.cfg.StopProbing)
}

// fault plays a step that injects a fault: a fault step, or a process
// step (kill, pause, restart, resume), which is a fault on one replica. A
// kill or a pause opens one (recorded when it has taken effect), the
// matching restart or resume heals it; a restart of a running replica is
// a fault of its own, healed at once.
func (p *execution) fault(ctx context.Context, sf stepFault) error {
	switch {
	case sf.err != nil:
		return sf.err
	case sf.heal: // a resume with no pause before it fails here, naming it
		return p.heal(ctx, sf.id)
	case sf.f == nil:
		return fmt.Errorf("empty step")
	}
	if err := p.apply(ctx, sf.id, sf.f); err != nil {
		return err
	}
	if _, ok := sf.f.(*faults.Restart); ok {
		return p.heal(ctx, sf.id)
	}
	return nil
}

func (p *execution) apply(ctx context.Context, id string, f faults.Fault) error {
	if _, dup := p.faults[id]; dup {
		return fmt.Errorf("fault %s is already active", id)
	}
	heal, err := faults.Apply(ctx, p.env, f)
	if err != nil {
		return err
	}
	p.faults[id] = active{f, heal}
	return nil
}

func (p *execution) heal(ctx context.Context, id string) error {
	a, ok := p.faults[id]
	if !ok {
		return fmt.Errorf("heal %s: no such active fault", id)
	}
	delete(p.faults, id)
	err := a.heal(ctx)
	p.mu.Lock()
	p.healed = time.Now()
	p.mu.Unlock()
	return err
}

// release lets the gateway answer a held charge for a symbolic order; a
// hold that never came is an error, never "release every hold".
func (p *execution) release(ctx context.Context, sym string) error {
	ev, err := p.gatewayEvent(ctx, scenarios.Wait{Timeout: time.Second}, gatewaysim.EventHold, p.realOrder(sym))
	if err != nil {
		return fmt.Errorf("release %s: %w", sym, err)
	}
	return p.r.cfg.Env.GatewayController().Release(ev.HoldID)
}

// releaseOwnHolds releases the holds on this example's orders, and only
// those: families play at once on one gateway, and releasing every hold
// would let one example's cleanup answer another's crash wave mid-strike
// (whose own release then finds "unknown hold", and the wave ends
// UNKNOWN).
func (p *execution) releaseOwnHolds(ctx context.Context) error {
	gw := p.r.cfg.Env.GatewayController()
	holds, err := gw.Holds(ctx)
	if err != nil {
		return err
	}
	var errs []error
	p.mu.Lock()
	own := maps.Clone(p.orders)
	p.mu.Unlock()
	for _, h := range holds {
		if !own[h.OrderID] {
			continue
		}
		if err := gw.Release(h.ID); err != nil && !errors.Is(err, gatewaysim.ErrUnknownHold) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// cleanup repairs what the scenario broke, so the next example starts on
// a healthy environment: faults healed, holds released, replicas resumed
// and restarted. It always runs, also after a failed step.
func (p *execution) cleanup(ctx context.Context) error {
	var errs []error
	ctx = context.WithoutCancel(ctx)
	if err := p.releaseOwnHolds(ctx); err != nil {
		errs = append(errs, fmt.Errorf("release holds: %w", err))
	}
	// Network and gateway faults first, then paused replicas resumed,
	// then killed ones restarted, so that a restarted replica comes up on
	// healthy links.
	ids := slices.Sorted(maps.Keys(p.faults))
	slices.SortStableFunc(ids, func(a, b string) int { return cleanupRank(p.faults[a].f) - cleanupRank(p.faults[b].f) })
	if p.r.cfg.Gate != nil && slices.ContainsFunc(ids, func(id string) bool { return faults.IsMomentary(p.faults[id].f) }) {
		// A momentary fault left active (the steps stopped early) is
		// healed by a relaunch: the others' requests wait for it, and Run
		// restores the gate after cleanup.
		if err := p.r.cfg.Gate.disruptMomentarily(ctx, p); err != nil {
			errs = append(errs, err)
		}
	}
	for _, id := range ids {
		if err := p.heal(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	if err := p.collect(ctx, []string{"*"}); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	return nil
}

// cleanupRank orders the heals of the faults left active: faults
// beyond one replica (links, stores, the gateway) and those aimed at one
// payment first, then a replica's state undone (a paused replica
// resumed, a clock put back), then a crashed replica started again, so
// that it comes up on healthy links.
func cleanupRank(f faults.Fault) int {
	switch {
	case f.Scope() != history.Replica:
		return 0
	case f.Class() != history.Crash:
		return 1
	}
	return 2
}

// labeller records faults into an example's history, adding the labels of
// the step that injects them (the crash point and payment it strikes), and
// into the other examples in flight when they are environment-wide
// (share; shared.go).
type labeller struct {
	rec    *history.Recorder
	share  func(history.Fault) (heal func())
	mu     sync.Mutex
	cur    map[string]string
	shared map[int]func() // own fault id -> records its heal in the others
}

func (l *labeller) set(labels map[string]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur = labels
}

// Inject records f with the current labels.
func (l *labeller) Inject(f history.Fault) int {
	heal := l.share(f)
	l.mu.Lock()
	if len(l.cur) > 0 {
		f.Params = maps.Clone(f.Params)
		if f.Params == nil {
			f.Params = map[string]string{}
		}
		maps.Copy(f.Params, l.cur)
	}
	id := l.rec.Inject(f)
	if heal != nil {
		l.shared[id] = heal
	}
	l.mu.Unlock()
	return id
}

// Heal records a heal, here and in the examples that lived through it.
func (l *labeller) Heal(id int) {
	l.rec.Heal(id)
	l.mu.Lock()
	heal := l.shared[id]
	delete(l.shared, id)
	l.mu.Unlock()
	if heal != nil {
		heal()
	}
}
