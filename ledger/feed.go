package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// ErrFeedBehind is returned by Barrier when the feed could not reach the
// gateway's latest event in time: the evidence is incomplete, and an
// example judged on it can only be UNKNOWN.
var ErrFeedBehind = errors.New("ledger feed behind the gateway")

// DefaultBarrierTimeout bounds one barrier: long enough for a loaded
// machine's SSE stream, short enough that a dead gateway is noticed.
const DefaultBarrierTimeout = 10 * time.Second

// Feed is the run's one ledger feed: it follows every gateway event (all
// orders, all API keys) from the start of the run and indexes them by
// order and by fault rule. Examples read their evidence from it after a
// Barrier, so a charge committed before an example is judged is never
// missing from its history, whichever mode delivers the events and however
// late; and a charge made later (a sweeper, a late recovery) is still
// there for the reconciliation.
//
// It keeps only what is still to be read: an order's events until the
// order is forgotten (Forget, once its example is let go), the charges
// until the reconciliation has taken them (DropCharges), and the time
// each fault rule first fired; other events are not kept. A soak's feed
// grows with its length only by that time per rule.
type Feed struct {
	ctl    gatewaysim.Controller
	cancel func()
	done   chan struct{}

	mu      sync.Mutex
	seq     int64                         // last event handled
	advance chan struct{}                 // closed and replaced when seq moves or the feed ends
	ended   bool                          // the subscription closed
	byOrder map[string][]gatewaysim.Event // events naming an order, in Seq order
	fired   map[string]time.Time          // when each fault rule first fired (a fault or a hold)
	charges []gatewaysim.Event            // charge and decline events from the base-th on
	base    int                           // charge events dropped (DropCharges)
}

// NewFeed follows ctl from its first retained event.
func NewFeed(ctl gatewaysim.Controller) *Feed {
	ch, cancel := ctl.SubscribeSince(0)
	f := &Feed{ctl: ctl, cancel: cancel, done: make(chan struct{}), advance: make(chan struct{}),
		byOrder: map[string][]gatewaysim.Event{}, fired: map[string]time.Time{}}
	go f.run(ch)
	return f
}

func (f *Feed) run(ch <-chan gatewaysim.Event) {
	defer close(f.done)
	for ev := range ch {
		f.handle(ev)
	}
	f.mu.Lock()
	f.ended = true
	f.signal()
	f.mu.Unlock()
}

func (f *Feed) handle(ev gatewaysim.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev.Seq <= f.seq {
		return
	}
	if ev.OrderID != "" {
		f.byOrder[ev.OrderID] = append(f.byOrder[ev.OrderID], ev)
	}
	if ev.Type == gatewaysim.EventCharge || ev.Type == gatewaysim.EventDecline {
		f.charges = append(f.charges, ev)
	}
	if _, seen := f.fired[ev.FaultID]; !seen && ev.FaultID != "" && (ev.Type == gatewaysim.EventFault || ev.Type == gatewaysim.EventHold) {
		f.fired[ev.FaultID] = ev.Time
	}
	f.seq = ev.Seq
	f.signal()
}

// signal wakes every waiter; f.mu is held.
func (f *Feed) signal() {
	close(f.advance)
	f.advance = make(chan struct{})
}

// Close stops following.
func (f *Feed) Close() {
	f.cancel()
	<-f.done
}

// Barrier returns once the feed has handled every event the gateway had
// emitted when Barrier was called, asking the gateway itself how far that
// is. Bounded by ctx and DefaultBarrierTimeout; a timeout is ErrFeedBehind.
func (f *Feed) Barrier(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultBarrierTimeout)
	defer cancel()
	want, err := f.ctl.LastSeq(ctx)
	if err != nil {
		return fmt.Errorf("%w: ask the gateway for its last event: %w", ErrFeedBehind, err)
	}
	_, err = f.await(ctx, func() bool { return f.seq >= want })
	if err != nil {
		return fmt.Errorf("%w: at event %d of %d: %w", ErrFeedBehind, f.Seq(), want, err)
	}
	return nil
}

// Seq is the last event handled.
func (f *Feed) Seq() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

// await blocks until cond (called with f.mu held) is true, the feed ends
// or ctx does.
func (f *Feed) await(ctx context.Context, cond func() bool) (bool, error) {
	for {
		f.mu.Lock()
		ok, ended, advance := cond(), f.ended, f.advance
		f.mu.Unlock()
		if ok {
			return true, nil
		}
		if ended {
			return false, gatewaysim.ErrClosed
		}
		select {
		case <-advance:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// WaitOrder returns the first event of type typ for order, waiting for it
// if it has not happened yet.
func (f *Feed) WaitOrder(ctx context.Context, order, typ string) (gatewaysim.Event, error) {
	var found gatewaysim.Event
	_, err := f.await(ctx, func() bool {
		for _, ev := range f.byOrder[order] {
			if ev.Type == typ {
				found = ev
				return true
			}
		}
		return false
	})
	return found, err
}

// ChargesFrom returns the ledger's charge and decline events from the
// i-th (counting from 0) on, waiting until there is at least one, and the
// index of the first: i, or the first not dropped (DropCharges) when i
// is earlier.
func (f *Feed) ChargesFrom(ctx context.Context, i int) (int, []gatewaysim.Event, error) {
	var (
		start int
		evs   []gatewaysim.Event
	)
	_, err := f.await(ctx, func() bool {
		start, evs = f.chargesFrom(i)
		return len(evs) > 0
	})
	return start, evs, err
}

// chargesFrom is ChargesFrom without the wait; f.mu is held.
func (f *Feed) chargesFrom(i int) (int, []gatewaysim.Event) {
	start := max(i, f.base)
	return start, slices.Clone(f.charges[min(start-f.base, len(f.charges)):])
}

// DropCharges lets go of the charge events before the i-th: whoever
// reads them in order (the Ledger) has taken them.
func (f *Feed) DropCharges(i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := min(i-f.base, len(f.charges)); n > 0 {
		clear(f.charges[:n]) // let the events be collected
		f.charges = f.charges[n:]
		f.base += n
	}
}

// Order is every event naming order so far, in Seq order.
func (f *Feed) Order(order string) []gatewaysim.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.byOrder[order])
}

// Forget lets go of orders' events: their example is judged and let go
// (Ledger.SetRetain), and nothing reads them again but the
// reconciliation, which reads charges. An event that comes for one of
// them later (a sweeper's, minutes on) is kept as any other.
func (f *Feed) Forget(orders []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range orders {
		delete(f.byOrder, o)
	}
}

// FirstFiring is when the gateway rule id first fired (a fault event or
// a hold), and whether it did.
func (f *Feed) FirstFiring(id string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.fired[id]
	return at, ok
}

// Stamper puts a wall-clock instant on an example's clock: its recorder
// while it plays (*history.Recorder), its clock alone once it is judged
// (history.Clock).
type Stamper interface {
	At(t time.Time) time.Duration
}

// ChargeOf converts a ledger event (a charge or a decline) to the
// history's form, stamped by clock (at 0 when clock is nil: a charge
// no example owns); other events are not charges. It is the one
// converter.
func ChargeOf(ev gatewaysim.Event, clock Stamper) (history.Charge, bool) {
	var status string
	switch ev.Type {
	case gatewaysim.EventCharge:
		status = gatewaysim.StatusSucceeded
	case gatewaysim.EventDecline:
		status = gatewaysim.StatusFailed
	default:
		return history.Charge{}, false
	}
	var at time.Duration
	if clock != nil {
		at = clock.At(ev.Time)
	}
	return history.Charge{
		ID: ev.ChargeID, Order: ev.OrderID, Amount: ev.Amount, Currency: ev.Currency, Status: status,
		IdempotencyKey: ev.IdempotencyKey, APIKey: ev.APIKey, At: at, Alias: ev.PaymentIntent,
	}, true
}
