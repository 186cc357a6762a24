package scenarios

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/idemcheck/idemcheck/checker"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// played is what the Runner keeps of a judged example for the
// reconciliation: its recorder (the clock its charges are stamped on),
// the history Run returned, and the example's charges as known now. The
// returned history is never changed: a charge that arrives later goes
// into charges, and a new history is made from both (lateCharges).
type played struct {
	sc       Scenario
	rec      *history.Recorder
	judged   *history.History // as Run returned it; read-only
	charges  []history.Charge // judged's charges and every later one; under the Runner's mu
	included map[string]bool  // charge ids in charges
}

// own marks a real order as this example's: the run's reconciliation
// attributes every charge for it here.
func (p *play) own(order string) {
	p.mu.Lock()
	p.orders[order] = true
	p.mu.Unlock()
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	if p.r.owned == nil {
		p.r.owned = map[string]*played{}
	}
	if _, taken := p.r.owned[order]; !taken {
		p.r.owned[order] = nil // sent, not judged yet
	}
}

// evidence waits until the ledger feed has caught up with the gateway
// and builds the example's history: its ops and faults, every ledger
// event for its orders (whenever it happened), and when each gateway rule
// fired. A history is incomplete when the play ended early (runErr) or
// the feed could not catch up. The history is finished before it is
// registered for the reconciliation, which may copy it at once.
func (p *play) evidence(ctx context.Context, runErr error) (*history.History, error) {
	orders, err := p.gather(ctx)
	if runErr != nil {
		err = runErr
	}
	h := p.rec.Snapshot(err == nil)
	pl := &played{sc: p.sc, rec: p.rec, judged: h, charges: slices.Clone(h.Charges), included: maps.Clone(p.included)}
	p.r.mu.Lock()
	for _, o := range orders {
		if p.r.owned[o] == nil {
			p.r.owned[o] = pl
		}
	}
	p.r.mu.Unlock()
	return h, err
}

// gather waits for the ledger feed to catch up with the gateway (a
// barrier) and takes into the recorder the ledger events for the
// example's orders that it has not taken yet, and when each armed gateway
// rule fired; it returns the orders, sorted. It may run more than once
// (a checkpoint, then the end).
func (p *play) gather(ctx context.Context) ([]string, error) {
	feed := p.r.Feed()
	err := feed.Barrier(context.WithoutCancel(ctx))
	p.mu.Lock()
	orders := slices.Sorted(maps.Keys(p.orders))
	p.mu.Unlock()
	for _, o := range orders {
		evs := feed.Order(o)
		for _, ev := range evs[p.seen[o]:] {
			if c, ok := ChargeOf(ev, p.rec); ok && !p.included[c.ID] {
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

// failedSoFar judges the example as played so far, when that is a whole
// example of its own (every request answered, no fault active) whose
// evidence is complete (the ledger feed caught up), and says whether it
// already holds a double charge (doubleCharge): a late-retry example
// then need not wait out its later probes, since no later step takes the
// money back. Other failures are not taken early: a prefix can end on an
// indeterminate answer that a later probe or the final convergence
// resolves (M6), or name a charge the ledger has not delivered yet (M3).
func (p *play) failedSoFar(ctx context.Context) bool {
	if len(p.pending) > 0 || len(p.faults) > 0 {
		return false
	}
	if _, err := p.gather(ctx); err != nil {
		return false
	}
	for _, c := range checker.Check(p.rec.Snapshot(true)).Checks {
		if c.Verdict == checker.Failed && slices.Contains(doubleCharge, c.ID) {
			return true
		}
	}
	return false
}

// doubleCharge are the checks whose FAILED is two charges the ledger
// already holds for one payment.
var doubleCharge = []string{"M1", "E1", "E2"}

// stampFirings records when each armed gateway rule of the example fired.
func (p *play) stampFirings(feed *Feed) {
	for _, f := range p.rec.Snapshot(false).Faults {
		rule := f.Params["fault_id"]
		if f.Fired != 0 || rule == "" {
			continue
		}
		if at, ok := feed.FirstFiring(rule); ok {
			p.rec.FireAt(f.ID, p.rec.At(at))
		}
	}
}

// Reconciliation is the gateway's whole ledger held against every example
// the Runner played.
type Reconciliation struct {
	// Checked counts the ledger's entries.
	Checked int
	// Rejudge holds the examples for which the gateway made a charge
	// after they were judged (a sweeper, a late recovery), their history
	// with that charge added: judge them again.
	Rejudge []Late
	// Unattributed is money the harness cannot account for: a charge
	// without metadata[order_id], or for an order no example sent.
	Unattributed []history.Charge
}

// Late is an example to judge again: its scenario and its history with
// the charges made after it was judged.
type Late struct {
	Scenario Scenario
	History  *history.History
}

// Reconcile reads the gateway's full ledger, after a barrier, and holds
// it against every example played so far. Call it at the end of every
// family and of the run; an example is offered for re-judging once per
// new charge.
func (r *Runner) Reconcile(ctx context.Context) (Reconciliation, error) {
	var rc Reconciliation
	if err := r.Feed().Barrier(ctx); err != nil {
		return rc, err
	}
	if r.beforeErr != nil {
		return rc, fmt.Errorf("reconcile: the gateway's ledger before the run: %w", r.beforeErr)
	}
	ledger, err := r.Env.GatewayController().Ledger(ctx)
	if err != nil {
		return rc, fmt.Errorf("reconcile: read the gateway's ledger: %w", err)
	}
	rc.Checked = len(ledger) - len(r.before)
	r.mu.Lock()
	defer r.mu.Unlock()
	late := lateCharges{}
	for _, c := range ledger {
		if r.before[c.ID] {
			continue // an earlier run's, in a reused environment
		}
		pl, sent := r.owned[c.OrderID]
		if c.OrderID == "" || !sent {
			rc.Unattributed = append(rc.Unattributed, ledgerCharge(c, nil))
			continue
		}
		late.add(pl, c.ID, func() history.Charge { return ledgerCharge(c, pl.rec) })
	}
	rc.Rejudge = late.examples()
	return rc, nil
}

// WatchLate calls fn, until ctx ends, with every example the gateway
// charges for after it was judged (a sweeper, an outbox, a late
// recovery), as soon as the ledger feed delivers the charge: a run finds
// such a failure when it happens, not at its end. The end-of-run
// Reconcile stays the complete account (a charge that arrives while its
// example is being judged is left to it) and does not offer what fn got
// again.
func (r *Runner) WatchLate(ctx context.Context, fn func(Late)) {
	for next := 0; ; {
		evs, err := r.Feed().ChargesFrom(ctx, next)
		if err != nil {
			return
		}
		next += len(evs)
		r.mu.Lock()
		late := lateCharges{}
		for _, ev := range evs {
			pl := r.owned[ev.OrderID]
			late.add(pl, ev.ChargeID, func() history.Charge { c, _ := ChargeOf(ev, pl.rec); return c })
		}
		examples := late.examples()
		r.mu.Unlock()
		for _, l := range examples {
			fn(l)
		}
	}
}

// lateCharges collects charges made after their example was judged; the
// Runner's mu is held.
type lateCharges map[*played]bool

// add puts charge id (built by charge) into pl's history unless pl is not
// judged yet (its own barrier will see the charge) or has it already.
func (l lateCharges) add(pl *played, id string, charge func() history.Charge) {
	if pl == nil || pl.included[id] {
		return
	}
	pl.charges = append(pl.charges, charge())
	pl.included[id] = true
	l[pl] = true
}

// examples are the changed examples to judge again, by seed, each with a
// new history: the one Run returned, with every charge known now.
func (l lateCharges) examples() []Late {
	var out []Late
	for pl := range l {
		slices.SortStableFunc(pl.charges, func(a, b history.Charge) int { return cmp.Compare(a.At, b.At) })
		h := *pl.judged
		h.Charges = slices.Clone(pl.charges)
		out = append(out, Late{Scenario: pl.sc, History: &h})
	}
	slices.SortFunc(out, func(a, b Late) int { return cmp.Compare(a.Scenario.Seed, b.Scenario.Seed) })
	return out
}

// ledgerCharge converts a ledger entry, stamped on rec's clock (or at 0
// when no example owns it).
func ledgerCharge(c gatewaysim.Charge, rec *history.Recorder) history.Charge {
	hc := history.Charge{ID: c.ID, Order: c.OrderID, Amount: c.Amount, Currency: c.Currency, Status: c.Status,
		IdempotencyKey: c.IdempotencyKey, APIKey: c.APIKey}
	if rec != nil {
		hc.At = rec.At(c.Created)
	}
	return hc
}

// String names the reconciliation's outcome in one line for logs.
func (rc Reconciliation) String() string {
	return "checked " + strconv.Itoa(rc.Checked) + " ledger entries, " + strconv.Itoa(len(rc.Rejudge)) +
		" examples to judge again, " + strconv.Itoa(len(rc.Unattributed)) + " unattributed charges"
}
