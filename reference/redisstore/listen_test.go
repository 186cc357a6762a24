package redisstore_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/storetest"
)

// A waiter that registered on a key is woken by its finish through Redis
// pub/sub, with the result; a key nobody waits on publishes nothing.
func TestStore_FinishWakesRegisteredWaiters(t *testing.T) {
	s := newStore(t)
	hub := reference.NewHub(s, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go hub.Run(ctx)
	storetest.Eventually(t, "the hub subscribes", hub.Listening)
	now := time.Now()
	c := storetest.NewClaim("owner", now, time.Minute)
	storetest.MustClaim(t, s, c)
	sub := hub.Subscribe(c.Tenant, c.KeyHash)
	defer sub.Close()
	if rec, err := s.Register(t.Context(), c.Tenant, c.KeyHash); rec == nil || err != nil {
		t.Fatalf("register: %+v %v", rec, err)
	}
	if ok, err := s.Finish(t.Context(), c.Tenant, c.KeyHash, c.RequestID, storetest.Charged, now); !ok || err != nil {
		t.Fatal(ok, err)
	}
	timeout := time.After(10 * time.Second)
	var n reference.Notice
	for n.Result == nil { // an empty notice is a spurious wake-up, allowed
		select {
		case n = <-sub.C:
		case <-timeout:
			t.Fatal("the waiter was not woken by the finish")
		}
	}
	if n.RequestID != c.RequestID || n.Result.Status != 201 || string(n.Result.Body) != string(storetest.Charged.Body) {
		t.Fatalf("notice %+v", n)
	}
	if rec, err := s.Register(t.Context(), c.Tenant, c.KeyHash); rec != nil || err != nil {
		t.Fatalf("registered on a finished key: %+v %v", rec, err)
	}
}

// The hub's subscription ends as soon as its context does, not at the
// next idle check: a replica being stopped (every graceful restart) had
// waited up to idleCheck (5s) for it.
func TestStore_ListenEndsWithItsContext(t *testing.T) {
	s := newStore(t)
	hub := reference.NewHub(s, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { hub.Run(ctx); close(done) }()
	storetest.Eventually(t, "the hub subscribes", hub.Listening)
	cancel()
	select {
	case <-done:
	case <-time.After(2 * time.Second): // under idleCheck: the receive was not interrupted
		t.Fatal("the hub's subscription outlived its context by 2s")
	}
}
