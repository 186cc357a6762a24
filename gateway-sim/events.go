package gatewaysim

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Event types. Every decision about money and every fault firing is an
// event, emitted under the same lock as the decision, so Seq order is the
// order in which things happened at the gateway.
const (
	EventCharge  = "charge"  // a charge committed (ledger entry, status succeeded)
	EventDecline = "decline" // a decline committed (ledger entry, status failed)
	EventFault   = "fault"   // a fault fired; Fault and FaultID say which
	EventHold    = "hold"    // a committed charge's response is withheld; HoldID releases it
	EventRelease = "release" // a hold was released
	EventReplay  = "replay"  // a stored decision was replayed for a re-sent key
	EventReset   = "reset"   // the simulator was reset; earlier events are forgotten
)

// Event is one entry of the simulator's event stream. Seq increases by one
// per event for the life of the Sim and is never reset, so a consumer that
// resumes with ?since=SEQ after a Reset cannot mistake old events for new.
type Event struct {
	Seq            int64     `json:"seq"`
	Type           string    `json:"type"`
	Fault          FaultKind `json:"fault,omitempty"`
	FaultID        string    `json:"fault_id,omitempty"`
	OrderID        string    `json:"order_id,omitempty"`
	ChargeID       string    `json:"charge_id,omitempty"`
	PaymentIntent  string    `json:"payment_intent,omitempty"` // charge and decline events of a confirmed PaymentIntent
	HoldID         string    `json:"hold_id,omitempty"`
	APIKey         string    `json:"api_key,omitempty"`
	IdempotencyKey string    `json:"idempotency_key,omitempty"`
	Amount         int64     `json:"amount,omitempty"`
	Currency       string    `json:"currency,omitempty"`
	// Method, Path and Via are a foreign request's (EventForeign): what
	// it asked for and the path it came by (HandlerVia).
	Method string    `json:"method,omitempty"`
	Path   string    `json:"path,omitempty"`
	Via    string    `json:"via,omitempty"`
	Time   time.Time `json:"time"`
}

// eventLog keeps every event since the last reset (so WaitEvent can match
// the past) and fans new ones out to subscribers. It has its own lock, taken
// after Sim.mu when both are needed.
type eventLog struct {
	mu     sync.Mutex
	seq    int64
	events []Event
	subs   map[*subscriber]struct{}
	closed bool
	retain time.Duration // 0: keep every event and charge (Sim.ForgetAfter)
}

func newEventLog() *eventLog {
	return &eventLog{subs: make(map[*subscriber]struct{})}
}

// emit numbers the event, records it and queues it for every subscriber.
func (l *eventLog) emit(ev Event) Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	ev.Seq = l.seq
	l.forgetBefore(ev.Time.Add(-l.retain))
	l.events = append(l.events, ev)
	for sub := range l.subs {
		sub.push(ev)
	}
	return ev
}

// forgetBefore drops the retained events emitted before t, unless there
// is no retention; l.mu is held.
func (l *eventLog) forgetBefore(t time.Time) {
	if l.retain <= 0 {
		return
	}
	n := EventsBefore(l.events, t)
	clear(l.events[:n])
	l.events = l.events[n:]
}

// EventsBefore is how many of events, in Seq order, happened before t:
// what a retention forgets first (Sim.ForgetAfter, and a harness's copy
// of the stream the same way).
func EventsBefore(events []Event, t time.Time) int {
	n := 0
	for n < len(events) && events[n].Time.Before(t) {
		n++
	}
	return n
}

// subscribe registers a subscriber whose queue starts with the retained
// events after since: backlog and registration are one atomic step, so no
// event falls between them.
func (l *eventLog) subscribe(since int64) *subscriber {
	l.mu.Lock()
	defer l.mu.Unlock()
	sub := newSubscriber()
	if l.closed {
		sub.stop()
		close(sub.out)
		return sub
	}
	for _, ev := range l.events {
		if ev.Seq > since {
			sub.push(ev)
		}
	}
	l.subs[sub] = struct{}{}
	go sub.pump()
	return sub
}

func (l *eventLog) unsubscribe(sub *subscriber) {
	l.mu.Lock()
	delete(l.subs, sub)
	l.mu.Unlock()
	sub.stop()
}

// forget drops the retained events; subscribers keep their queues.
func (l *eventLog) forget() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = nil
}

// close ends every subscription and refuses new ones.
func (l *eventLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for sub := range l.subs {
		sub.stop()
		delete(l.subs, sub)
	}
}

// retention is how long events and charges are kept (Sim.ForgetAfter).
func (l *eventLog) retention() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.retain
}

func (l *eventLog) lastSeq() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// emit stamps an event with the simulator's clock and publishes it.
// Callers hold s.mu, which makes event order equal decision order.
func (s *Sim) emit(ev Event) Event {
	ev.Time = s.cfg.Now()
	return s.events.emit(ev)
}

// Subscribe returns a channel of every event from now on and a function that
// ends the subscription and closes the channel. Each subscriber has an
// unbounded queue, so a slow harness never blocks the gateway and never
// misses a ledger event.
func (s *Sim) Subscribe() (<-chan Event, func()) {
	return s.SubscribeSince(s.events.lastSeq())
}

// SubscribeSince is Subscribe starting after sequence number since: retained
// events (those since the last Reset) with a larger Seq are delivered first.
// SubscribeSince(0) replays everything since the last Reset.
func (s *Sim) SubscribeSince(since int64) (<-chan Event, func()) {
	sub := s.events.subscribe(since)
	var once sync.Once
	return sub.out, func() { once.Do(func() { s.events.unsubscribe(sub) }) }
}

// WaitEvent returns the first event since the last Reset for which pred is
// true, waiting for it if it has not happened yet. It is how tests and the
// harness synchronise with the gateway without sleeping: bound the wait with
// ctx.
func (s *Sim) WaitEvent(ctx context.Context, pred func(Event) bool) (Event, error) {
	ch, cancel := s.SubscribeSince(0)
	defer cancel()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return Event{}, ErrClosed
			}
			if pred(ev) {
				return ev, nil
			}
		case <-ctx.Done():
			return Event{}, fmt.Errorf("gatewaysim: wait for event: %w", ctx.Err())
		}
	}
}

// Events returns the retained events (those since the last Reset).
func (s *Sim) Events() []Event {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	return append([]Event(nil), s.events.events...)
}
