package ledger

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/scenarios"
)

// Ledger is a run's account of money: the gateway's event feed, and
// which example sent each order, so that every charge the gateway makes,
// whenever it makes it, is attributed to one example (Reconcile,
// WatchLate) or reported as money nobody can account for.
type Ledger struct {
	ctl       gatewaysim.Controller
	feed      *Feed
	before    map[string]bool // charge ids the gateway held before the ledger began
	beforeErr error

	mu    sync.Mutex
	owned map[string]*account // real order -> the example that sent it; nil until judged
	// retain is how long a judged example's history is kept to judge it
	// again with a late charge (SetRetain; zero: to the end of the run),
	// and held lists the accounts still holding theirs, oldest first.
	retain time.Duration
	held   []*account
}

// account is what the Ledger keeps of a judged example: its recorder
// (the clock its charges are stamped on), the history Run returned, and
// the example's charges as known now. The returned history is never
// changed: a charge that arrives later goes into charges, and a new
// history is made from both (lateCharges).
type account struct {
	sc       scenarios.Scenario
	rec      *history.Recorder
	judged   *history.History // as Run returned it; read-only; nil once let go
	charges  []history.Charge // judged's charges and every later one; under the Ledger's mu
	included map[string]bool  // charge ids in charges
	at       time.Time        // when it was judged
}

// letGo drops the account's history and charges, keeping only the ids
// of the charges it had: a charge that comes later is known to be late.
func (a *account) letGo() {
	a.judged, a.rec, a.charges, a.sc = nil, nil, nil, scenarios.Scenario{}
}

// SetRetain makes the Ledger let go of a judged example's history d after
// it was judged: a soak's memory does not grow with its length. A charge
// for its orders that comes later still (a sweeper minutes on) cannot be
// judged with its example: Reconcile reports it as Unjudged.
func (l *Ledger) SetRetain(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.retain = d
}

// letGoLocked lets go of the accounts judged more than retain ago.
func (l *Ledger) letGoLocked(now time.Time) {
	if l.retain <= 0 {
		return
	}
	i := 0
	for ; i < len(l.held) && now.Sub(l.held[i].at) > l.retain; i++ {
		l.held[i].letGo()
	}
	l.held = slices.Delete(l.held, 0, i)
}

// NewLedger follows ctl's events from its first retained one, and notes
// the charges the gateway holds already: an environment reused by several
// runs (the conformance suite) has charges of earlier runs that this
// run's reconciliation must not count.
func NewLedger(ctl gatewaysim.Controller) *Ledger {
	l := &Ledger{ctl: ctl, feed: NewFeed(ctl), before: map[string]bool{}, owned: map[string]*account{}}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultBarrierTimeout)
	defer cancel()
	charges, err := ctl.Ledger(ctx)
	for _, c := range charges {
		l.before[c.ID] = true
	}
	l.beforeErr = err
	return l
}

// Feed is the ledger's event feed.
func (l *Ledger) Feed() *Feed { return l.feed }

// Close stops the feed.
func (l *Ledger) Close() { l.feed.Close() }

// Own notes that an example sent order: every charge for it is that
// example's, once the example is judged (Judged).
func (l *Ledger) Own(order string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, taken := l.owned[order]; !taken {
		l.owned[order] = nil // sent, not judged yet
	}
}

// Judged attributes orders to the example judged on h: charges for them
// that h does not hold (included names those it does) are late. h is
// finished and is never changed from here on.
func (l *Ledger) Judged(sc scenarios.Scenario, rec *history.Recorder, h *history.History, included map[string]bool, orders []string) {
	a := &account{sc: sc, rec: rec, judged: h, charges: slices.Clone(h.Charges), included: included, at: time.Now()}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range orders {
		if l.owned[o] == nil {
			l.owned[o] = a
		}
	}
	if l.retain > 0 {
		l.held = append(l.held, a)
		l.letGoLocked(a.at)
	}
}

// Reconciliation is the gateway's whole ledger held against every example
// the run played.
type Reconciliation struct {
	// Checked counts the ledger's entries.
	Checked int
	// Rejudge holds the examples for which the gateway made a charge
	// after they were judged (a sweeper, a late recovery), each with a new
	// history holding that charge: judge them again.
	Rejudge []Late
	// Retain is how long a judged example's history was kept (SetRetain).
	Retain time.Duration
	// Unjudged are succeeded charges for orders whose example had been
	// let go (SetRetain) before they came: they cannot be judged with
	// their example.
	Unjudged []history.Charge
	// Unattributed is money the harness cannot account for: a charge
	// naming no order where the run traces money, or an order no example sent.
	Unattributed []history.Charge
}

// Late is an example to judge again: its scenario and a new history, the
// one it was judged on with the charges made after.
type Late struct {
	Scenario scenarios.Scenario
	History  *history.History
}

// Reconcile reads the gateway's full ledger, after a barrier, and holds
// it against every example judged so far. Call it at the end of every
// family and of the run; an example is offered for re-judging once per
// new charge.
func (l *Ledger) Reconcile(ctx context.Context) (Reconciliation, error) {
	var rc Reconciliation
	if err := l.feed.Barrier(ctx); err != nil {
		return rc, err
	}
	if l.beforeErr != nil {
		return rc, fmt.Errorf("reconcile: the gateway's ledger before the run: %w", l.beforeErr)
	}
	charges, err := l.ctl.Ledger(ctx)
	if err != nil {
		return rc, fmt.Errorf("reconcile: read the gateway's ledger: %w", err)
	}
	rc.Checked = len(charges) - len(l.before)
	l.mu.Lock()
	defer l.mu.Unlock()
	rc.Retain = l.retain
	late := lateCharges{}
	for _, c := range charges {
		if l.before[c.ID] {
			continue // an earlier run's, in a reused environment
		}
		a, sent := l.owned[c.OrderID]
		if c.OrderID == "" || !sent {
			rc.Unattributed = append(rc.Unattributed, ledgerCharge(c, nil))
			continue
		}
		if a != nil && a.judged == nil && !a.included[c.ID] {
			if c.Succeeded() {
				rc.Unjudged = append(rc.Unjudged, ledgerCharge(c, nil))
			}
			continue
		}
		late.add(a, c.ID, func() history.Charge { return ledgerCharge(c, a.rec) })
	}
	rc.Rejudge = late.examples()
	return rc, nil
}

// WatchLate calls fn, until ctx ends, with every example the gateway
// charges for after it was judged (a sweeper, an outbox, a late
// recovery), as soon as the feed delivers the charge: a run finds such a
// failure when it happens, not at its end. The end-of-run Reconcile stays
// the complete account (a charge that arrives while its example is being
// judged is left to it) and does not offer what fn got again.
func (l *Ledger) WatchLate(ctx context.Context, fn func(Late)) {
	for next := 0; ; {
		evs, err := l.feed.ChargesFrom(ctx, next)
		if err != nil {
			return
		}
		next += len(evs)
		l.mu.Lock()
		late := lateCharges{}
		for _, ev := range evs {
			a := l.owned[ev.OrderID]
			if a != nil && a.judged == nil {
				continue // let go: Reconcile reports it
			}
			late.add(a, ev.ChargeID, func() history.Charge { c, _ := ChargeOf(ev, a.rec); return c })
		}
		examples := late.examples()
		l.mu.Unlock()
		for _, ex := range examples {
			fn(ex)
		}
	}
}

// lateCharges collects charges made after their example was judged; the
// Ledger's mu is held.
type lateCharges map[*account]bool

// add puts charge id (built by charge) into a's charges unless a is not
// judged yet (its own barrier will see the charge) or has it already.
func (l lateCharges) add(a *account, id string, charge func() history.Charge) {
	if a == nil || a.included[id] {
		return
	}
	a.charges = append(a.charges, charge())
	a.included[id] = true
	l[a] = true
}

// examples are the changed examples to judge again, by seed, each with a
// new history: the one Run returned, with every charge known now.
func (l lateCharges) examples() []Late {
	var out []Late
	for a := range l {
		slices.SortStableFunc(a.charges, func(x, y history.Charge) int { return cmp.Compare(x.At, y.At) })
		h := *a.judged
		h.Charges = slices.Clone(a.charges)
		out = append(out, Late{Scenario: a.sc, History: &h})
	}
	slices.SortFunc(out, func(a, b Late) int { return cmp.Compare(a.Scenario.Seed, b.Scenario.Seed) })
	return out
}

// ledgerCharge converts a ledger entry, stamped on rec's clock (or at 0
// when no example owns it), through the one converter.
func ledgerCharge(c gatewaysim.Charge, rec *history.Recorder) history.Charge {
	hc, _ := ChargeOf(chargeEvent(c), rec)
	return hc
}

// String names the reconciliation's outcome in one line for logs.
func (rc Reconciliation) String() string {
	return "checked " + strconv.Itoa(rc.Checked) + " ledger entries, " + strconv.Itoa(len(rc.Rejudge)) +
		" examples to judge again, " + strconv.Itoa(len(rc.Unattributed)) + " unattributed charges"
}
