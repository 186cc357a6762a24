package runner

import (
	"context"
	"maps"
	"slices"

	"github.com/idemcheck/idemcheck/faults"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/ledger"
)

// own marks a real order as this example's: the run's reconciliation
// attributes every charge for it here.
func (p *execution) own(order string) {
	p.mu.Lock()
	p.orders[order] = true
	p.mu.Unlock()
	p.r.Ledger().Own(order)
}

// evidence waits until the ledger feed has caught up with the gateway
// and builds the example's history: its ops and faults, every ledger
// event for its orders (whenever it happened), and when each gateway rule
// fired. A history is incomplete when the play ended early (runErr) or
// the feed could not catch up. The history is finished before it is
// registered for the reconciliation, which may copy it at once.
func (p *execution) evidence(ctx context.Context, runErr error) (*history.History, error) {
	orders, err := p.gather(ctx)
	if runErr != nil {
		err = runErr
	}
	h := p.rec.Snapshot(err == nil)
	p.r.Ledger().Judged(p.sc, p.rec, h, maps.Clone(p.included), orders)
	return h, err
}

// gather waits for the ledger feed to catch up with the gateway (a
// barrier) and takes into the recorder the ledger events for the
// example's orders that it has not taken yet, and when each armed gateway
// rule fired; it returns the orders, sorted. It may run more than once
// (a checkpoint, then the end).
func (p *execution) gather(ctx context.Context) ([]string, error) {
	feed := p.r.Ledger().Feed()
	err := feed.Barrier(context.WithoutCancel(ctx))
	p.mu.Lock()
	orders := slices.Sorted(maps.Keys(p.orders))
	p.mu.Unlock()
	for _, o := range orders {
		evs := feed.Order(o)
		for _, ev := range evs[p.seen[o]:] {
			if c, ok := ledger.ChargeOf(ev, p.rec); ok && !p.included[c.ID] {
				p.rec.Charge(c)
				p.included[c.ID] = true
			}
			if ev.Type == gatewaysim.EventReplay {
				p.rec.GatewayReplay(history.GatewayReplay{Order: ev.OrderID, ChargeID: ev.ChargeID, IdempotencyKey: ev.IdempotencyKey, At: p.rec.At(ev.Time)})
			}
		}
		p.seen[o] = len(evs)
	}
	p.stampFirings(feed)
	return orders, err
}

// failedSoFar says whether the example as played so far has failed for
// good, as the Runner's StopEarly judges it, when that is a whole example
// of its own (every request answered, no fault active) whose evidence is
// complete (the ledger feed caught up). Without StopEarly, never.
func (p *execution) failedSoFar(ctx context.Context) bool {
	if p.r.cfg.StopEarly == nil || len(p.pending) > 0 || len(p.faults) > 0 {
		return false
	}
	if _, err := p.gather(ctx); err != nil {
		return false
	}
	return p.r.cfg.StopEarly(p.rec.Snapshot(true))
}

// stampFirings records when each armed gateway rule of the example fired.
func (p *execution) stampFirings(feed *ledger.Feed) {
	for _, f := range p.rec.Snapshot(false).Faults {
		rule := f.Params[faults.ParamRule]
		if f.Fired != 0 || rule == "" {
			continue
		}
		if at, ok := feed.FirstFiring(rule); ok {
			p.rec.FireAt(f.ID, p.rec.At(at))
		}
	}
}
