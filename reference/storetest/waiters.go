package storetest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// A waiter registers on an unresolved key and is woken after its finish,
// by the store's notification or by the hub's poll, and then reads the
// result; a finished key takes no waiter.
func registeredWaiterIsWoken(t *testing.T, newStore NewStore) {
	s := newStore(t)
	hub := reference.NewHub(s, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go hub.Run(ctx)
	Eventually(t, "the hub listens", hub.Listening)
	now := time.Now()
	c := NewClaim("owner", now, time.Minute)
	MustClaim(t, s, c)
	sub := hub.Subscribe(c.Tenant, c.KeyHash)
	defer sub.Close()
	rec, err := s.Register(t.Context(), c.Tenant, c.KeyHash)
	if err != nil || rec == nil || rec.RequestID != c.RequestID || rec.Terminal() {
		t.Fatalf("register: %+v %v", rec, err)
	}
	finish(t, s, c, now)
	timeout := time.After(10 * time.Second)
	for {
		select {
		case <-sub.C:
		case <-timeout:
			t.Fatal("the waiter was not woken after the finish")
		}
		if rec := Lookup(t, s, c); rec.Terminal() {
			break
		}
	}
	if rec, err := s.Register(t.Context(), c.Tenant, c.KeyHash); rec != nil || err != nil {
		t.Fatalf("registered on a finished key: %+v %v", rec, err)
	}
	if rec, err := s.Register(t.Context(), c.Tenant, reference.KeyHash("absent")); rec != nil || err != nil {
		t.Fatalf("registered on an absent key: %+v %v", rec, err)
	}
}
