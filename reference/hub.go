package reference

import (
	"context"
	"encoding/hex"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Hub is one replica's subscription to its store's notifications
// (Notifier: LISTEN/NOTIFY for PostgreSQL), fanned out to the requests
// waiting in this process: one database connection per replica however
// many duplicates wait, instead of one per waiter. A waiter Subscribes to
// its key before it registers on the key (Store.Register), so the
// notification of any finish after the registration reaches it. Over a
// store that does not notify, the hub wakes every waiter each
// PollInterval instead.
//
// Notifications are a latency optimisation, never a safety mechanism: when
// the connection drops, every waiter is woken on reconnect to re-read its
// key (notifications may have been lost meanwhile), and waiters also wake at
// their lease deadline and max wait on their own.
type Hub struct {
	listen func(ctx context.Context, subscribed func(), deliver func(payload string)) error // nil: poll
	log    *slog.Logger

	mu   sync.Mutex
	subs map[string]map[*Subscription]struct{}

	listening atomic.Bool
	ready     chan struct{}
	readyOnce sync.Once
}

// Subscription is one waiter's interest in one key. C receives a Notice
// whenever the key may have changed; only the latest undelivered notice is
// kept, and the hub never blocks on a slow waiter.
type Subscription struct {
	C   <-chan Notice
	c   chan Notice
	hub *Hub
	key string
}

// Notice is what a notification says about a key. A finish includes its
// result, so the woken waiters answer without reading the database (fifty
// duplicates waking at once cost no fifty queries); any other wake-up (a
// release, a reconnect) carries none, and the waiter reads the key.
type Notice struct {
	RequestID string  // the claim the result belongs to
	Result    *Result // nil: read the key
}

// FinishPayload is the payload of a finish notification: NotifyPayload,
// then " <status> <request id> <body hex>", so the woken waiters answer
// with the result without reading the key. PostgresStore.Finish builds the
// same in SQL.
func FinishPayload(tenant string, keyHash []byte, requestID string, res Result) string {
	return NotifyPayload(tenant, keyHash) + " " + strconv.Itoa(res.Status) + " " + requestID + " " + hex.EncodeToString(res.Body)
}

// parseNotify splits a payload into the routing key and its notice. The
// payload is NotifyPayload, optionally followed by " <status> <request id>
// <body hex>" (FinishPayload).
func parseNotify(payload string) (string, Notice) {
	key, rest, ok := strings.Cut(payload, " ")
	if !ok {
		return key, Notice{}
	}
	f := strings.Fields(rest)
	if len(f) != 3 {
		return key, Notice{}
	}
	status, err1 := strconv.Atoi(f[0])
	body, err2 := hex.DecodeString(f[2])
	if err1 != nil || err2 != nil {
		return key, Notice{}
	}
	return key, Notice{RequestID: f[1], Result: &Result{Status: status, Body: body}}
}

// PollInterval is how often a hub over a store without notifications
// (no Notifier) wakes every waiter to read its key again: the bound on how
// late a waiter learns that its key was finished.
const PollInterval = 100 * time.Millisecond

// NewHub returns the hub of a store: it listens through the store's
// notifications when the store is a Notifier, and polls otherwise.
func NewHub(store Store, log *slog.Logger) *Hub {
	h := &Hub{log: log, subs: make(map[string]map[*Subscription]struct{}), ready: make(chan struct{})}
	if n, ok := store.(Notifier); ok {
		h.listen = n.Listen
	}
	return h
}

// Subscribe registers interest in a key; Close the subscription when done.
func (h *Hub) Subscribe(tenant string, keyHash []byte) *Subscription {
	c := make(chan Notice, 1)
	s := &Subscription{C: c, c: c, hub: h, key: NotifyPayload(tenant, keyHash)}
	h.mu.Lock()
	set := h.subs[s.key]
	if set == nil {
		set = make(map[*Subscription]struct{})
		h.subs[s.key] = set
	}
	set[s] = struct{}{}
	h.mu.Unlock()
	return s
}

// Close removes the subscription.
func (s *Subscription) Close() {
	h := s.hub
	h.mu.Lock()
	if set := h.subs[s.key]; set != nil {
		delete(set, s)
		if len(set) == 0 {
			delete(h.subs, s.key)
		}
	}
	h.mu.Unlock()
}

// wake delivers n, replacing an undelivered older notice. Only the hub
// sends (under its lock), so after draining the send cannot block.
func (s *Subscription) wake(n Notice) {
	select {
	case s.c <- n:
	default:
		select {
		case <-s.c:
		default:
		}
		s.c <- n
	}
}

// Ready is closed once the hub has listened (or polled) for the first time.
func (h *Hub) Ready() <-chan struct{} { return h.ready }

// Listening reports whether the hub is subscribed to the store's
// notifications (or polling).
func (h *Hub) Listening() bool { return h.listening.Load() }

// Waiters is the number of subscriptions, for metrics and tests.
func (h *Hub) Waiters() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, set := range h.subs {
		n += len(set)
	}
	return n
}

func (h *Hub) dispatch(payload string) {
	key, n := parseNotify(payload)
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[key] {
		s.wake(n)
	}
}

func (h *Hub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, set := range h.subs {
		for s := range set {
			s.wake(Notice{})
		}
	}
}

// Run listens until ctx ends, reconnecting with capped backoff; over a
// store that does not notify, it polls.
func (h *Hub) Run(ctx context.Context) error {
	if h.listen == nil {
		h.poll(ctx)
		return nil
	}
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		err := h.listen(ctx, h.subscribed, h.dispatch)
		h.listening.Store(false)
		if ctx.Err() != nil {
			break
		}
		h.log.Warn("notification listener lost; reconnecting", "err", err, "backoff", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
	return nil
}

// subscribed marks the hub listening and wakes everyone: anything sent
// while it was away is lost.
func (h *Hub) subscribed() {
	h.listening.Store(true)
	h.wakeAll()
	h.readyOnce.Do(func() { close(h.ready) })
}

// poll wakes every waiter each PollInterval until ctx ends.
func (h *Hub) poll(ctx context.Context) {
	h.subscribed()
	repeat(ctx, PollInterval, PollInterval, func() bool {
		h.wakeAll()
		return true
	})
}
