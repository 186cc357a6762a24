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
//
// Each charge is taken once, in the feed's order, by whichever of
// WatchLate and Reconcile reads it first: a charge for an example being
// played waits for its judgement (pending), one for a judged example is
// late, one for an example let go is unjudged, any other unattributed.
// So nothing but an index of the orders sent grows with a soak's length.
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
	// The charges taken so far (take): next is the feed's index of the
	// next one, checked counts them, pending holds those for orders whose
	// example is not judged yet, late the accounts with charges not yet
	// offered for judging again.
	next         int
	checked      int
	pending      map[string][]gatewaysim.Event
	late         lateCharges
	unjudged     []history.Charge
	unattributed []history.Charge
}

// account is what the Ledger keeps of a judged example: its clock (what
// its charges are stamped on; not its recorder, which holds a copy of
// everything the history does), the history Run returned, and the
// example's charges as known now. The returned history is never
// changed: a charge that arrives later goes into charges, and a new
// history is made from both (lateCharges).
type account struct {
	sc       scenarios.Scenario
	clock    history.Clock
	judged   *history.History // as Run returned it; read-only
	charges  []history.Charge // judged's charges and every later one; under the Ledger's mu
	included map[string]bool  // charge ids in charges
	orders   []string
	at       time.Time // when it was judged
}

// gone is the account of every order whose example was let go: the
// index of orders keeps nothing else of them.
var gone = &account{}

// SetRetain makes the Ledger let go of a judged example's history d after
// it was judged: a soak's memory does not grow with its length. A charge
// for its orders that comes later still (a sweeper minutes on) cannot be
// judged with its example: Reconcile reports it as Unjudged. An
// in-process gateway (gatewaysim.Forgetter) forgets its charges and
// events d after they happened too: the Ledger has taken them by then.
func (l *Ledger) SetRetain(d time.Duration) {
	l.mu.Lock()
	l.retain = d
	l.mu.Unlock()
	if f, ok := l.ctl.(gatewaysim.Forgetter); ok {
		f.ForgetAfter(d)
	}
}

// letGoLocked lets go of the accounts judged more than retain ago whose
// late charges, if any, were offered already: their orders point to gone
// and the feed forgets their events. Every charge the feed holds is taken
// first, while the accounts still tell a charge their history holds from
// a late one.
func (l *Ledger) letGoLocked(now time.Time) {
	if l.retain <= 0 || len(l.held) == 0 || now.Sub(l.held[0].at) <= l.retain {
		return
	}
	l.catchUpLocked()
	i := 0
	for ; i < len(l.held) && now.Sub(l.held[i].at) > l.retain && !l.late[l.held[i]]; i++ {
		for _, o := range l.held[i].orders {
			l.owned[o] = gone
		}
		l.feed.Forget(l.held[i].orders)
	}
	clear(l.held[:i])
	l.held = l.held[i:]
}

// NewLedger follows ctl's events from its first retained one, and notes
// the charges the gateway holds already: an environment reused by several
// runs (the conformance suite) has charges of earlier runs that this
// run's reconciliation must not count.
func NewLedger(ctl gatewaysim.Controller) *Ledger {
	l := &Ledger{ctl: ctl, feed: NewFeed(ctl), before: map[string]bool{}, owned: map[string]*account{},
		pending: map[string][]gatewaysim.Event{}, late: lateCharges{}}
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
	a := &account{sc: sc, clock: rec.Clock(), judged: h, charges: slices.Clone(h.Charges), included: included, at: time.Now()}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range orders {
		if l.owned[o] == nil {
			l.owned[o] = a
			a.orders = append(a.orders, o)
		}
		// Charges taken while the example was played: late unless its
		// history holds them.
		for _, ev := range l.pending[o] {
			l.late.add(a, ev.ChargeID, func() history.Charge { c, _ := ChargeOf(ev, a.clock); return c })
		}
		delete(l.pending, o)
	}
	if l.retain > 0 {
		l.held = append(l.held, a)
		l.letGoLocked(a.at)
	}
}

// take attributes the feed's charge events evs, the first of which is
// the feed's i-th, skipping those taken already; l.mu is held.
func (l *Ledger) take(i int, evs []gatewaysim.Event) {
	for _, ev := range evs[min(max(l.next-i, 0), len(evs)):] {
		l.takeOne(ev)
	}
	l.next = max(l.next, i+len(evs))
	l.feed.DropCharges(l.next)
}

// takeOne attributes one charge event; l.mu is held.
func (l *Ledger) takeOne(ev gatewaysim.Event) {
	if l.before[ev.ChargeID] {
		return // an earlier run's, in a reused environment
	}
	l.checked++
	a, sent := l.owned[ev.OrderID]
	switch {
	case ev.OrderID == "" || !sent:
		c, _ := ChargeOf(ev, nil)
		l.unattributed = append(l.unattributed, c)
	case a == nil:
		l.pending[ev.OrderID] = append(l.pending[ev.OrderID], ev)
	case a == gone:
		if ev.Type == gatewaysim.EventCharge {
			c, _ := ChargeOf(ev, nil)
			l.unjudged = append(l.unjudged, c)
		}
	default:
		l.late.add(a, ev.ChargeID, func() history.Charge { c, _ := ChargeOf(ev, a.clock); return c })
	}
}

// catchUpLocked takes every charge the feed holds; l.mu is held.
func (l *Ledger) catchUpLocked() {
	l.feed.mu.Lock()
	start, evs := l.feed.chargesFrom(l.next)
	l.feed.mu.Unlock()
	l.take(start, evs)
}

// offerLocked takes the accounts with late charges not offered yet, each
// as a new history to judge again; l.mu is held.
func (l *Ledger) offerLocked() []Late {
	out := l.late.examples()
	clear(l.late)
	return out
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

// Reconcile takes, after a barrier, every charge the gateway made that
// WatchLate has not taken yet, and holds the run's charges against every
// example judged so far. Call it at the end of every family and of the
// run; an example is offered for re-judging once per new charge.
func (l *Ledger) Reconcile(ctx context.Context) (Reconciliation, error) {
	var rc Reconciliation
	if err := l.feed.Barrier(ctx); err != nil {
		return rc, err
	}
	if l.beforeErr != nil {
		return rc, fmt.Errorf("reconcile: the gateway's ledger before the run: %w", l.beforeErr)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.catchUpLocked()
	rc.Checked, rc.Retain = l.checked, l.retain
	rc.Unjudged, rc.Unattributed = slices.Clone(l.unjudged), slices.Clone(l.unattributed)
	rc.Rejudge = l.offerLocked()
	return rc, nil
}

// WatchLate calls fn, until ctx ends, with every example the gateway
// charges for after it was judged (a sweeper, an outbox, a late
// recovery), as soon as the feed delivers the charge: a run finds such a
// failure when it happens, not at its end. A charge that arrives while
// its example is being played is held for its judgement, and offered
// with the next charge taken if the example's history lacks it; the
// end-of-run Reconcile offers what is left and does not offer what fn
// got again.
func (l *Ledger) WatchLate(ctx context.Context, fn func(Late)) {
	for {
		l.mu.Lock()
		next := l.next
		l.mu.Unlock()
		start, evs, err := l.feed.ChargesFrom(ctx, next)
		if err != nil {
			return
		}
		l.mu.Lock()
		l.take(start, evs)
		examples := l.offerLocked()
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

// String names the reconciliation's outcome in one line for logs.
func (rc Reconciliation) String() string {
	return "checked " + strconv.Itoa(rc.Checked) + " ledger entries, " + strconv.Itoa(len(rc.Rejudge)) +
		" examples to judge again, " + strconv.Itoa(len(rc.Unattributed)) + " unattributed charges"
}
