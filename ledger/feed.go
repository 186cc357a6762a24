package ledger

import (
	"context"
	"errors"
	"fmt"
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
type Feed struct {
	ctl    gatewaysim.Controller
	cancel func()
	done   chan struct{}

	mu      sync.Mutex
	seq     int64              // last event handled
	advance chan struct{}      // closed and replaced when seq moves or the feed ends
	ended   bool               // the subscription closed
	events  []gatewaysim.Event // the one log, in Seq order; the indexes below hold positions in it
	byOrder map[string][]int   // events naming an order
	byFault map[string][]int   // fault and hold events by rule id
	charges []int              // charge and decline events
}

// NewFeed follows ctl from its first retained event.
func NewFeed(ctl gatewaysim.Controller) *Feed {
	ch, cancel := ctl.SubscribeSince(0)
	f := &Feed{ctl: ctl, cancel: cancel, done: make(chan struct{}), advance: make(chan struct{}),
		byOrder: map[string][]int{}, byFault: map[string][]int{}}
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
	i := len(f.events)
	f.events = append(f.events, ev)
	if ev.OrderID != "" {
		f.byOrder[ev.OrderID] = append(f.byOrder[ev.OrderID], i)
	}
	if ev.Type == gatewaysim.EventCharge || ev.Type == gatewaysim.EventDecline {
		f.charges = append(f.charges, i)
	}
	if ev.FaultID != "" && (ev.Type == gatewaysim.EventFault || ev.Type == gatewaysim.EventHold) {
		f.byFault[ev.FaultID] = append(f.byFault[ev.FaultID], i)
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
		for _, i := range f.byOrder[order] {
			if f.events[i].Type == typ {
				found = f.events[i]
				return true
			}
		}
		return false
	})
	return found, err
}

// ChargesFrom returns the ledger's charge and decline events from the
// i-th (counting from 0) on, waiting until there is at least one.
func (f *Feed) ChargesFrom(ctx context.Context, i int) ([]gatewaysim.Event, error) {
	var evs []gatewaysim.Event
	_, err := f.await(ctx, func() bool {
		evs = f.pick(evs[:0], f.charges[min(i, len(f.charges)):])
		return len(evs) > 0
	})
	return evs, err
}

// Order is every event naming order so far, in Seq order.
func (f *Feed) Order(order string) []gatewaysim.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pick(nil, f.byOrder[order])
}

// FirstFiring is when the gateway rule id first fired (a fault event or
// a hold), and whether it did.
func (f *Feed) FirstFiring(id string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	at := f.byFault[id]
	if len(at) == 0 {
		return time.Time{}, false
	}
	return f.events[at[0]].Time, true
}

// pick appends the events at positions to dst; f.mu is held.
func (f *Feed) pick(dst []gatewaysim.Event, positions []int) []gatewaysim.Event {
	for _, i := range positions {
		dst = append(dst, f.events[i])
	}
	return dst
}

// ChargeOf converts a ledger event (a charge or a decline) to the
// history's form, stamped on rec's clock (at 0 when rec is nil: a charge
// no example owns); other events are not charges. It is the one
// converter: a ledger entry read from the gateway is converted through
// its event (chargeEvent).
func ChargeOf(ev gatewaysim.Event, rec *history.Recorder) (history.Charge, bool) {
	var status string
	switch ev.Type {
	case gatewaysim.EventCharge:
		status = gatewaysim.StatusSucceeded
	case gatewaysim.EventDecline:
		status = gatewaysim.StatusFailed
	default:
		return history.Charge{}, false
	}
	return history.Charge{
		ID: ev.ChargeID, Order: ev.OrderID, Amount: ev.Amount, Currency: ev.Currency, Status: status,
		IdempotencyKey: ev.IdempotencyKey, APIKey: ev.APIKey, At: stamp(rec, ev.Time), Alias: ev.PaymentIntent,
	}, true
}

// stamp is t on rec's clock, or 0 without a recorder.
func stamp(rec *history.Recorder, t time.Time) time.Duration {
	if rec == nil {
		return 0
	}
	return rec.At(t)
}

// chargeEvent is the event the gateway emitted for a ledger entry: a
// charge, or a decline for a failed one.
func chargeEvent(c gatewaysim.Charge) gatewaysim.Event {
	typ := gatewaysim.EventCharge
	if c.Status != gatewaysim.StatusSucceeded {
		typ = gatewaysim.EventDecline
	}
	return gatewaysim.Event{Type: typ, ChargeID: c.ID, PaymentIntent: c.PaymentIntent, OrderID: c.OrderID, Amount: c.Amount,
		Currency: c.Currency, IdempotencyKey: c.IdempotencyKey, APIKey: c.APIKey, Time: c.Created}
}
