package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// A live lease is not taken over; an expired one is taken by exactly one
// of many concurrent takers, under the same request id, and the old
// owner's token no longer releases or renews it.
func takeOverOnlyAfterTheLeaseExpired(t *testing.T, newStore NewStore) {
	s, c := claimed(t, newStore, "dead", time.Second)
	now := c.Now
	if rec, err := s.TakeOver(t.Context(), c.Tenant, c.KeyHash, "thief", now.Add(500*time.Millisecond), time.Second); rec != nil || err != nil {
		t.Fatalf("a live lease was taken over: %+v %v", rec, err)
	}
	later := now.Add(2 * time.Second)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			rec, err := s.TakeOver(context.Background(), c.Tenant, c.KeyHash, fmt.Sprintf("r%d", i), later, time.Minute)
			if err != nil {
				t.Error(err)
			}
			if rec != nil {
				wins.Add(1)
				if rec.RequestID != c.RequestID || rec.State != reference.StateNeedsRecovery || rec.Attempts != 2 ||
					rec.LeaseOwner != fmt.Sprintf("r%d", i) {
					t.Errorf("taken record %+v", rec)
				}
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d takeovers won, want 1", wins.Load())
	}
	if err := s.Release(t.Context(), c.Tenant, c.KeyHash, c.RequestID, "dead", later); err != nil {
		t.Fatal(err)
	}
	if held, _ := s.RenewLeases(t.Context(), "dead", []reference.Lease{leaseOf(c)}, later, time.Hour); len(held) != 0 {
		t.Fatal("the old owner renewed a lease taken over")
	}
	if rec := Lookup(t, s, c); rec.LeaseOwner == "dead" || rec.State != reference.StateNeedsRecovery || !rec.LeaseUntil.After(later) {
		t.Fatalf("the old owner's token changed the record: %+v", rec)
	}
	finish(t, s, c, later) // the taker re-asked the gateway under the same request id
	if rec, err := s.TakeOver(t.Context(), c.Tenant, c.KeyHash, "late", later.Add(time.Hour), time.Minute); rec != nil || err != nil {
		t.Fatalf("a finished key was taken over: %+v %v", rec, err)
	}
}

// The sweeper's takeover leases only keys whose lease expired and that are
// old enough, each to one of two concurrent sweepers, and skips resolved
// ones.
func leaseStaleSharesTheWork(t *testing.T, newStore NewStore) {
	s := newStore(t)
	now := time.Now()
	var stale []reference.Claim
	for range 10 {
		c := NewClaim("dead", now.Add(-time.Minute), time.Second)
		MustClaim(t, s, c)
		stale = append(stale, c)
	}
	young := NewClaim("dead", now.Add(-2*time.Second), time.Second)
	live := NewClaim("alive", now.Add(-time.Minute), time.Hour)
	done := NewClaim("dead", now.Add(-time.Minute), time.Second)
	for _, c := range []reference.Claim{young, live, done} {
		MustClaim(t, s, c)
	}
	finish(t, s, done, now)
	var mu sync.Mutex
	taken := map[string]int{}
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			owner := fmt.Sprintf("sweeper%d", i)
			recs, err := s.LeaseStale(context.Background(), owner, now, time.Minute, 30*time.Second, 100)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range recs {
				taken[r.RequestID]++
				if r.LeaseOwner != owner || r.State != reference.StateNeedsRecovery || r.Attempts != 2 {
					t.Errorf("swept record %+v", r)
				}
			}
		})
	}
	wg.Wait()
	if len(taken) != len(stale) {
		t.Fatalf("took %d keys, want the %d stale ones: %v", len(taken), len(stale), taken)
	}
	for _, c := range stale {
		if taken[c.RequestID] != 1 {
			t.Errorf("stale key %s taken %d times", c.RequestID, taken[c.RequestID])
		}
	}
	if again, err := s.LeaseStale(t.Context(), "sweeper3", now, time.Minute, 30*time.Second, 100); len(again) != 0 || err != nil {
		t.Fatalf("keys leased again within their new lease: %d %v", len(again), err)
	}
	if some, err := s.LeaseStale(t.Context(), "sweeper4", now.Add(2*time.Minute), time.Minute, 30*time.Second, 3); len(some) != 3 || err != nil {
		t.Fatalf("a sweep limited to 3 took %d: %v", len(some), err)
	}
}

// The keeper renews a lease through the store while the call runs, so
// the owner is not taken over however long it holds the key; once it
// lets go, the key is free a lease later.
func keeperRenewsTheLease(t *testing.T, newStore NewStore) {
	s := newStore(t)
	const length = 300 * time.Millisecond
	c := NewClaim("owner", time.Now(), length)
	MustClaim(t, s, c)
	keeper := reference.NewKeeper(s, "owner", length, time.Now, slog.New(slog.DiscardHandler))
	release := keeper.Hold(reference.Lease{Tenant: c.Tenant, KeyHash: c.KeyHash, RequestID: c.RequestID, Granted: c.Now})
	end := time.Now().Add(4 * length)
	for time.Now().Before(end) {
		if rec, err := s.TakeOver(t.Context(), c.Tenant, c.KeyHash, "thief", time.Now(), length); rec != nil || err != nil {
			release()
			t.Fatalf("a renewed lease was taken over: %+v %v", rec, err)
		}
		time.Sleep(length / 10)
	}
	release()
	Eventually(t, "the lease let go is free a lease later", func() bool {
		rec, err := s.TakeOver(t.Context(), c.Tenant, c.KeyHash, "retry", time.Now(), length)
		if err != nil {
			t.Fatal(err)
		}
		return rec != nil
	})
}
