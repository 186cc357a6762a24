package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// Past its TTL a finished key is compacted into a tombstone that keeps
// its fingerprint and result and stays readable until its forget time;
// then it is forgotten (by Expire, or by the database's own TTL) and the
// key may be claimed afresh. An unresolved key never expires.
func expiryCompactsThenForgets(t *testing.T, newStore NewStore) {
	s := newStore(t)
	now := time.Now()
	c := NewClaim("owner", now, time.Minute)
	c.TTL, c.Forget = 100*time.Millisecond, 2*time.Second
	MustClaim(t, s, c)
	open := NewClaim("owner", now, time.Minute)
	open.TTL, open.Forget = c.TTL, c.Forget
	MustClaim(t, s, open)
	finish(t, s, c, now)
	if n, _, err := s.Expire(t.Context(), now, 10); n != 0 || err != nil {
		t.Fatalf("compacted %d before the TTL: %v", n, err)
	}
	if n, _, err := s.Expire(t.Context(), now.Add(200*time.Millisecond), 10); n != 1 || err != nil {
		t.Fatalf("compacted %d past the TTL, want 1: %v", n, err)
	}
	if _, _, err := s.Expire(t.Context(), now.Add(time.Second), 10); err != nil {
		t.Fatal(err)
	}
	rec := Lookup(t, s, c)
	if !rec.Compacted || rec.Key != "" || rec.Params != (reference.ChargeParams{}) || string(rec.Fingerprint) != "fp" ||
		rec.State != reference.StateSucceeded || rec.RequestID != c.RequestID || rec.Result.ChargeID != "ch_1" ||
		string(rec.Result.Body) != `{"id":"ch_1"}` || !rec.ExpiresAt.Equal(rec.ForgetAt) {
		t.Fatalf("tombstone %+v", rec)
	}
	if rec := Lookup(t, s, open); rec.State != reference.StateInProgress || rec.Compacted {
		t.Fatalf("an unresolved key expired: %+v", rec)
	}
	Eventually(t, "the tombstone is forgotten at its forget time", func() bool {
		if _, _, err := s.Expire(t.Context(), time.Now(), 10); err != nil {
			t.Fatal(err)
		}
		_, err := s.Lookup(t.Context(), c.Tenant, c.KeyHash)
		return errors.Is(err, reference.ErrNotFound)
	})
	again := c
	again.RequestID, again.Now = "req_again", time.Now()
	if ok, _, err := s.Claim(t.Context(), again); !ok || err != nil {
		t.Fatalf("a forgotten key could not be claimed again: %v %v", ok, err)
	}
}

// A finished key past its forget time (by the caller's clock) that the
// database still holds is reclaimed once; an unresolved key, an unknown
// key and one inside its window are not.
func reclaimOnlyAForgottenKey(t *testing.T, newStore NewStore) {
	s, c := claimed(t, newStore, "owner", time.Minute)
	now := c.Now
	next := c
	next.RequestID, next.Now = "req_next", now.Add(2*time.Hour)
	if ok, err := s.Reclaim(t.Context(), next); ok || err != nil {
		t.Fatalf("an unresolved key was reclaimed: %v %v", ok, err)
	}
	if ok, err := s.Reclaim(t.Context(), NewClaim("x", now, time.Minute)); ok || err != nil {
		t.Fatalf("reclaimed an unknown key: %v %v", ok, err)
	}
	finish(t, s, c, now)
	early := next
	early.Now = now.Add(30 * time.Minute)
	if ok, err := s.Reclaim(t.Context(), early); ok || err != nil {
		t.Fatalf("a key inside its window was reclaimed: %v %v", ok, err)
	}
	if ok, err := s.Reclaim(t.Context(), next); !ok || err != nil {
		t.Fatalf("a forgotten key was not reclaimed: %v %v", ok, err)
	}
	if ok, err := s.Reclaim(t.Context(), next); ok || err != nil {
		t.Fatalf("reclaimed twice: %v %v", ok, err)
	}
	rec := Lookup(t, s, c)
	if rec.RequestID != "req_next" || rec.State != reference.StateInProgress || rec.Attempts != 1 ||
		rec.Result.Status != 0 || rec.Compacted || !rec.CreatedAt.Equal(next.Now.Truncate(time.Microsecond)) {
		t.Fatalf("reclaimed record %+v", rec)
	}
}
