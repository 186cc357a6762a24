package reference

import (
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Hub is one replica's LISTEN connection, fanned out to the requests waiting
// in this process: one database connection per replica however many
// duplicates wait, instead of one per waiter. A waiter Subscribes to its key
// before it registers on the key's row (Store.Register), so the NOTIFY of
// any finish after the registration reaches it.
//
// Notifications are a latency optimisation, never a safety mechanism: when
// the connection drops, every waiter is woken on reconnect to re-read its
// key (notifications may have been lost meanwhile), and waiters also wake at
// their lease deadline and max wait on their own.
type Hub struct {
	connect func(context.Context) (*pgx.Conn, error)
	log     *slog.Logger

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

// parseNotify splits a payload into the routing key and its notice. The
// payload is "<tenant>.<key hash hex>", optionally followed by
// " <status> <request id> <body hex>" (see Store.Finish).
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

// NewHub returns a hub that listens through its own connection, made with
// the pool's connection settings but outside the pool.
func NewHub(pool *pgxpool.Pool, log *slog.Logger) *Hub {
	cfg := pool.Config().ConnConfig
	return &Hub{
		connect: func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, cfg.Copy()) },
		log:     log,
		subs:    make(map[string]map[*Subscription]struct{}),
		ready:   make(chan struct{}),
	}
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

// Ready is closed once the hub has listened for the first time.
func (h *Hub) Ready() <-chan struct{} { return h.ready }

// Listening reports whether the LISTEN connection is up.
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

// Run listens until ctx ends, reconnecting with capped backoff.
func (h *Hub) Run(ctx context.Context) error {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		err := h.session(ctx)
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

// session is one connection's life: LISTEN, wake everyone (anything sent
// while we were away is lost), then dispatch until the connection fails.
func (h *Hub) session(ctx context.Context) error {
	conn, err := h.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{NotifyChannel}.Sanitize()); err != nil {
		return err
	}
	h.listening.Store(true)
	h.wakeAll()
	h.readyOnce.Do(func() { close(h.ready) })
	for {
		n, err := h.wait(ctx, conn)
		if err != nil {
			return err
		}
		if n != nil {
			h.dispatch(n.Payload)
		}
	}
}

// wait returns the next notification, or nil after an idle interval in
// which a ping proved the connection alive: a silently dead connection
// (a partition) is noticed within seconds instead of never.
func (h *Hub) wait(ctx context.Context, conn *pgx.Conn) (*pgconn.Notification, error) {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	n, err := conn.WaitForNotification(wctx)
	cancel()
	if err == nil || ctx.Err() != nil {
		return n, err
	}
	if !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return nil, conn.Ping(pctx)
}
