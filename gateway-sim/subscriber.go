package gatewaysim

import "sync"

// subscriber is one event consumer: an unbounded queue in front of a
// channel. push never blocks (the gateway must not stall on a slow harness)
// and never drops (the harness must see every ledger event); a goroutine
// moves queued events to the channel.
type subscriber struct {
	mu     sync.Mutex
	queue  []Event
	signal chan struct{} // capacity 1: "the queue grew"
	out    chan Event
	done   chan struct{}
	once   sync.Once
}

// subscriberBuffer lets a consumer that keeps up read without waking the pump
// for every event.
const subscriberBuffer = 64

func newSubscriber() *subscriber {
	return &subscriber{
		signal: make(chan struct{}, 1),
		out:    make(chan Event, subscriberBuffer),
		done:   make(chan struct{}),
	}
}

func (sub *subscriber) push(ev Event) {
	sub.mu.Lock()
	sub.queue = append(sub.queue, ev)
	sub.mu.Unlock()
	select {
	case sub.signal <- struct{}{}:
	default:
	}
}

func (sub *subscriber) take() []Event {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	q := sub.queue
	sub.queue = nil
	return q
}

// stop ends the subscription; pump closes out.
func (sub *subscriber) stop() {
	sub.once.Do(func() { close(sub.done) })
}

// pump runs until stop, delivering queued events in order, then closes out.
func (sub *subscriber) pump() {
	defer close(sub.out)
	for {
		for _, ev := range sub.take() {
			select {
			case sub.out <- ev:
			case <-sub.done:
				return
			}
		}
		select {
		case <-sub.signal:
		case <-sub.done:
			return
		}
	}
}
