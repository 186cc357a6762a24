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
	seq     int64                         // last event handled
	advance chan struct{}                 // closed and replaced when seq moves or the feed ends
	ended   bool                          // the subscription closed
	byOrder map[string][]gatewaysim.Event // events naming an order
	byFault map[string][]gatewaysim.Event // fault and hold events by rule id
	charges []gatewaysim.Event            // charge and decline events, in Seq order
}

// NewFeed follows ctl from its first retained event.
func NewFeed(ctl gatewaysim.Controller) *Feed {
	ch, cancel := ctl.SubscribeSince(0)
	f := &Feed{ctl: ctl, cancel: cancel, done: make(chan struct{}), advance: make(chan struct{}),
		byOrder: map[string][]gatewaysim.Event{}, byFault: map[string][]gatewaysim.Event{}}
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
	if ev.FaultID != "" && (ev.Type == gatewaysim.EventFault || ev.Type == gatewaysim.EventHold) {
		f.byFault[ev.FaultID] = append(f.byFault[ev.FaultID], ev)
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
// i-th (counting from 0) on, waiting until there is at least one.
func (f *Feed) ChargesFrom(ctx context.Context, i int) ([]gatewaysim.Event, error) {
	var evs []gatewaysim.Event
	_, err := f.await(ctx, func() bool {
		evs = append(evs[:0], f.charges[min(i, len(f.charges)):]...)
		return len(evs) > 0
	})
	return evs, err
}

// Order is every event naming order so far, in Seq order.
func (f *Feed) Order(order string) []gatewaysim.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]gatewaysim.Event(nil), f.byOrder[order]...)
}

// FirstFiring is when the gateway rule id first fired (a fault event or
// a hold), and whether it did.
func (f *Feed) FirstFiring(id string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	evs := f.byFault[id]
	if len(evs) == 0 {
		return time.Time{}, false
	}
	return evs[0].Time, true
}

// ChargeOf converts a ledger event (a charge or a decline) to the
// history's form, stamped on rec's clock; other events are not charges.
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
		IdempotencyKey: ev.IdempotencyKey, APIKey: ev.APIKey, At: rec.At(ev.Time),
	}, true
}
