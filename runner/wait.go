package runner

import (
	"cmp"
	"context"
	"fmt"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/scenarios"
)

// wait blocks on one condition, bounded: a wait that cannot be met is an
// error of the scenario, never a hang of the harness.
func (p *execution) wait(ctx context.Context, w scenarios.Wait) error {
	switch {
	case len(w.Responses) > 0:
		return p.collect(ctx, w.Responses)
	case w.Hold != "" && w.OrAnswered != "":
		return p.holdOrAnswer(ctx, w)
	case w.Hold != "":
		_, err := p.gatewayEvent(ctx, w, gatewaysim.EventHold, p.realOrder(w.Hold))
		return err
	case w.Charge != "":
		_, err := p.gatewayEvent(ctx, w, gatewaysim.EventCharge, p.realOrder(w.Charge))
		return err
	case w.TTL > 0:
		return p.sleepUntil(ctx, p.ttlWaitEnd(w))
	case w.Recovery:
		// The window counts from the last heal (a restarted replica
		// ready, a foreign fault healed), not from the end of the
		// requests sent since.
		p.recovering = cmp.Or(p.quietFrom(), time.Now())
		end := p.recovering.Add(p.recoveryWindow())
		if by := p.started().Add(w.Within); w.Within > 0 && by.Before(end) {
			end, p.retryBy = by, by // the final retries go inside the promise, the window passed or not
		}
		return p.sleepUntil(ctx, end)
	}
	return p.sleepUntil(ctx, time.Now().Add(w.For))
}

// ttlWaitEnd is when a wait of w.TTL ends: that many TTLs after the
// example's first request, or after w.From's answer (from now, while it
// is not in).
func (p *execution) ttlWaitEnd(w scenarios.Wait) time.Time {
	from := p.started()
	if w.From != "" {
		p.mu.Lock()
		from = p.answered[w.From]
		p.mu.Unlock()
		if from.IsZero() {
			from = time.Now()
		}
	}
	return from.Add(time.Duration(w.TTL * float64(p.r.cfg.Target.Policy.TTL)))
}

// answer records that send id was answered, now.
func (p *execution) answer(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id != "" && p.answered[id].IsZero() {
		p.answered[id] = time.Now()
	}
}

func (p *execution) bound(w scenarios.Wait) time.Duration {
	if w.Timeout > 0 {
		return w.Timeout
	}
	if p.r.cfg.WaitMax > 0 {
		return p.r.cfg.WaitMax
	}
	return 30 * time.Second
}

// sleepUntil lets time pass: this is the scenario's subject (a late retry,
// a lease running out), not synchronisation.
func (p *execution) sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// gatewayEvent waits, through the run's ledger feed, for the gateway's
// first event of type typ for order.
func (p *execution) gatewayEvent(ctx context.Context, w scenarios.Wait, typ, order string) (gatewaysim.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, p.bound(w))
	defer cancel()
	ev, err := p.r.Ledger().Feed().WaitOrder(ctx, order, typ)
	if err != nil {
		return ev, fmt.Errorf("no gateway %s event for %s: %w", typ, order, err)
	}
	return ev, nil
}

// collect waits for async sends to answer. "*" means all sent so far.
func (p *execution) collect(ctx context.Context, ids []string) error {
	if len(ids) == 1 && ids[0] == "*" {
		ids = ids[:0]
		for id := range p.pending {
			ids = append(ids, id)
		}
	}
	// A converging send may retry until the recovery window and the slack
	// have passed since the environment last healed, then wait out one
	// more request; a foreign fault healing meanwhile moves that bound.
	extra := p.client.Timeout() + 5*time.Second
	end := p.pastWindow(time.Now()).Add(extra)
	timer := time.NewTimer(time.Until(end))
	defer timer.Stop()
	for _, id := range ids {
		ch, ok := p.pending[id]
		if !ok {
			continue // already collected
		}
		for waiting := true; waiting; {
			select {
			case <-ch:
				delete(p.pending, id)
				p.answer(id)
				waiting = false
			case <-timer.C:
				if q := p.settled().Add(extra); q.After(end) {
					end = q
					timer.Reset(time.Until(end))
					continue
				}
				return fmt.Errorf("send %s did not answer within the client timeout", id)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// started is when the example's first request was sent (now, if none was).
func (p *execution) started() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.start.IsZero() {
		return time.Now()
	}
	return p.start
}
