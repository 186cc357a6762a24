package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemcheck/idemcheck/internal/redistest"
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/redisstore"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// newStore is a store on a logical database of its own.
func newStore(t *testing.T) *redisstore.Store {
	t.Helper()
	opts, err := redisstore.ParseURL(redistest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	if err := client.FlushDB(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	return redisstore.New(client)
}

var seq atomic.Int64

// newClaim is a claim on a fresh key, made now by owner with a lease of
// lease, kept a minute and bound an hour.
func newClaim(owner string, now time.Time, lease time.Duration) reference.Claim {
	n := seq.Add(1)
	key := fmt.Sprintf("key_%d", n)
	return reference.Claim{Tenant: reference.TenantID("sk_test"), KeyHash: reference.KeyHash(key), Key: key,
		Fingerprint: []byte("fp"), RequestID: fmt.Sprintf("req_%d", n),
		Params: reference.ChargeParams{Amount: 123456789012345, Currency: "usd", OrderID: fmt.Sprintf("ord_%d", n), Description: "a/b <c>"},
		Owner:  owner, Now: now, Lease: lease, TTL: time.Minute, Forget: time.Hour}
}

func mustClaim(t *testing.T, s *redisstore.Store, c reference.Claim) {
	t.Helper()
	if ok, _, err := s.Claim(t.Context(), c); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
}

// claimed is a store holding a fresh claim by owner, made now.
func claimed(t *testing.T, owner string, lease time.Duration) (*redisstore.Store, reference.Claim) {
	t.Helper()
	s := newStore(t)
	c := newClaim(owner, time.Now(), lease)
	mustClaim(t, s, c)
	return s, c
}

func lookup(t *testing.T, s *redisstore.Store, c reference.Claim) *reference.Record {
	t.Helper()
	rec, err := s.Lookup(t.Context(), c.Tenant, c.KeyHash)
	if err != nil {
		t.Fatalf("lookup: %v", err)
	}
	return rec
}

var charged = reference.Result{Status: 201, Body: []byte(`{"id":"ch_1"}`), ChargeID: "ch_1"}

// Of many concurrent claims on one key exactly one claims it; every other
// is answered with the winner's record, recorded before any gateway call.
func TestStore_ClaimRaceHasOneWinner(t *testing.T) {
	s := newStore(t)
	base := newClaim("r0", time.Now(), time.Minute)
	const n = 32
	var wins atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			c := base
			c.RequestID, c.Owner = fmt.Sprintf("req_racer_%d", i), fmt.Sprintf("r%d", i)
			ok, existing, err := s.Claim(context.Background(), c)
			switch {
			case err != nil:
				errs <- err
			case ok:
				wins.Add(1)
			case existing == nil || existing.State != reference.StateInProgress || existing.RequestID == c.RequestID:
				errs <- fmt.Errorf("racer %d lost but was answered %+v", i, existing)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if wins.Load() != 1 {
		t.Fatalf("%d claims won, want 1", wins.Load())
	}
}

// A record reads back as it was claimed: numbers beyond cjson's 14
// digits, bytes and times survive the scripts' decode and re-encode.
func TestStore_RecordRoundTripsThroughScripts(t *testing.T) {
	s := newStore(t)
	now := time.Now().Truncate(time.Microsecond)
	c := newClaim("r1", now, time.Minute)
	mustClaim(t, s, c)
	if _, err := s.Register(t.Context(), c.Tenant, c.KeyHash); err != nil { // a script rewrites the record
		t.Fatal(err)
	}
	rec := lookup(t, s, c)
	if rec.Params != c.Params || rec.RequestID != c.RequestID || rec.LeaseOwner != "r1" || rec.Attempts != 1 ||
		string(rec.Fingerprint) != "fp" || rec.Key != c.Key || !rec.CreatedAt.Equal(now) ||
		!rec.LeaseUntil.Equal(now.Add(time.Minute)) || !rec.ForgetAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("record %+v, claimed %+v", rec, c)
	}
}

// Only the holder of the request id finishes a key, only the lease owner
// under its request id releases or renews it, and a finished key is
// finished once.
func TestStore_OwnerTokenGuardsEveryWrite(t *testing.T) {
	s, c := claimed(t, "owner", time.Minute)
	now := c.Now
	ctx := t.Context()
	if ok, err := s.Finish(ctx, c.Tenant, c.KeyHash, "req_stale", charged, now); ok || err != nil {
		t.Fatalf("a stale request id finished the key: %v %v", ok, err)
	}
	if err := s.Release(ctx, c.Tenant, c.KeyHash, c.RequestID, "intruder", now); err != nil {
		t.Fatal(err)
	}
	lease := reference.Lease{Tenant: c.Tenant, KeyHash: c.KeyHash, RequestID: c.RequestID}
	held, err := s.RenewLeases(ctx, "intruder", []reference.Lease{lease}, now.Add(time.Hour), time.Hour)
	if err != nil || len(held) != 0 {
		t.Fatalf("another owner renewed the lease: %v %v", held, err)
	}
	if rec := lookup(t, s, c); rec.State != reference.StateInProgress || rec.LeaseOwner != "owner" ||
		!rec.LeaseUntil.Equal(c.Now.Add(c.Lease).Truncate(time.Microsecond)) {
		t.Fatalf("a refused write changed the record: %+v", rec)
	}
	held, err = s.RenewLeases(ctx, "owner", []reference.Lease{lease}, now.Add(time.Hour), time.Hour)
	if err != nil || !held[lease.ID()] {
		t.Fatalf("the owner could not renew: %v %v", held, err)
	}
	if ok, err := s.Finish(ctx, c.Tenant, c.KeyHash, c.RequestID, charged, now); !ok || err != nil {
		t.Fatalf("the holder could not finish: %v %v", ok, err)
	}
	if ok, err := s.Finish(ctx, c.Tenant, c.KeyHash, c.RequestID, reference.Result{Status: 402}, now); ok || err != nil {
		t.Fatalf("a finished key was finished again: %v %v", ok, err)
	}
	rec := lookup(t, s, c)
	if rec.State != reference.StateSucceeded || rec.Result.ChargeID != "ch_1" || string(rec.Result.Body) != `{"id":"ch_1"}` || rec.LeaseOwner != "" {
		t.Fatalf("finished record %+v", rec)
	}
}

// A live lease is not taken over; an expired one is taken by exactly one
// of many concurrent takers, under the same request id, and the old
// owner's token no longer releases or renews it.
func TestStore_TakeOverOnlyAfterTheLeaseExpired(t *testing.T) {
	s, c := claimed(t, "dead", time.Second)
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
				if rec.RequestID != c.RequestID || rec.State != reference.StateNeedsRecovery || rec.Attempts != 2 {
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
	lease := reference.Lease{Tenant: c.Tenant, KeyHash: c.KeyHash, RequestID: c.RequestID}
	if held, _ := s.RenewLeases(t.Context(), "dead", []reference.Lease{lease}, later, time.Hour); len(held) != 0 {
		t.Fatal("the old owner renewed a lease taken over")
	}
	if rec := lookup(t, s, c); rec.LeaseOwner == "dead" || rec.State != reference.StateNeedsRecovery || !rec.LeaseUntil.After(later) {
		t.Fatalf("the old owner's token changed the record: %+v", rec)
	}
}

// Release keeps the request id and expires the lease, so the next retry
// takes the key over at once.
func TestStore_ReleaseKeepsTheIntent(t *testing.T) {
	s, c := claimed(t, "owner", time.Hour)
	now := c.Now
	if err := s.Release(t.Context(), c.Tenant, c.KeyHash, c.RequestID, "owner", now); err != nil {
		t.Fatal(err)
	}
	rec, err := s.TakeOver(t.Context(), c.Tenant, c.KeyHash, "retry", now, time.Minute)
	if err != nil || rec == nil || rec.RequestID != c.RequestID {
		t.Fatalf("a released key was not taken over under its request id: %+v %v", rec, err)
	}
}

// The sweeper's takeover leases only keys whose lease expired and that are
// old enough, each to one of two concurrent sweepers, and skips resolved
// ones.
func TestStore_LeaseStaleSharesTheWork(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	var stale []reference.Claim
	for range 10 {
		c := newClaim("dead", now.Add(-time.Minute), time.Second)
		mustClaim(t, s, c)
		stale = append(stale, c)
	}
	young := newClaim("dead", now.Add(-2*time.Second), time.Second)
	live := newClaim("alive", now.Add(-time.Minute), time.Hour)
	done := newClaim("dead", now.Add(-time.Minute), time.Second)
	for _, c := range []reference.Claim{young, live, done} {
		mustClaim(t, s, c)
	}
	if ok, err := s.Finish(t.Context(), done.Tenant, done.KeyHash, done.RequestID, charged, now); !ok || err != nil {
		t.Fatal(ok, err)
	}
	var mu sync.Mutex
	taken := map[string]int{}
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			recs, err := s.LeaseStale(context.Background(), fmt.Sprintf("sweeper%d", i), now, time.Minute, 30*time.Second, 100)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range recs {
				taken[r.RequestID]++
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
}

// Past its TTL a finished key is compacted into a tombstone that keeps
// its fingerprint and result; Redis deletes it at its forget time; a
// tombstone past its forget time that Redis still holds is reclaimed.
func TestStore_ExpiryCompactsThenForgets(t *testing.T) {
	s := newStore(t)
	now := time.Now()
	c := newClaim("owner", now, time.Minute)
	c.TTL, c.Forget = 100*time.Millisecond, 800*time.Millisecond
	mustClaim(t, s, c)
	if ok, err := s.Finish(t.Context(), c.Tenant, c.KeyHash, c.RequestID, charged, now); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if n, _, err := s.Expire(t.Context(), now, 10); n != 0 || err != nil {
		t.Fatalf("compacted %d before the TTL: %v", n, err)
	}
	if n, _, err := s.Expire(t.Context(), now.Add(200*time.Millisecond), 10); n != 1 || err != nil {
		t.Fatalf("compacted %d past the TTL, want 1: %v", n, err)
	}
	rec := lookup(t, s, c)
	if !rec.Compacted || rec.Key != "" || rec.Params != (reference.ChargeParams{}) || string(rec.Fingerprint) != "fp" ||
		rec.Result.ChargeID != "ch_1" || !rec.ExpiresAt.Equal(rec.ForgetAt) {
		t.Fatalf("tombstone %+v", rec)
	}

	again := c
	again.RequestID, again.Now = "req_again", now.Add(time.Second)
	if ok, err := s.Reclaim(t.Context(), newClaim("x", now, time.Minute)); ok || err != nil {
		t.Fatalf("reclaimed an unknown key: %v %v", ok, err)
	}
	eventually(t, "Redis deletes the tombstone at its forget time", func() bool {
		_, err := s.Lookup(t.Context(), c.Tenant, c.KeyHash)
		return err == reference.ErrNotFound
	})
	if ok, _, err := s.Claim(t.Context(), again); !ok || err != nil {
		t.Fatalf("a forgotten key could not be claimed again: %v %v", ok, err)
	}
}

// A tombstone past its forget time (by the caller's clock) is reclaimed
// once, and a key inside its window is not.
func TestStore_ReclaimOnlyAForgottenKey(t *testing.T) {
	s, c := claimed(t, "owner", time.Minute)
	now := c.Now
	next := c
	next.RequestID, next.Now = "req_next", now.Add(2*time.Hour)
	if ok, err := s.Reclaim(t.Context(), next); ok || err != nil {
		t.Fatalf("an unresolved key was reclaimed: %v %v", ok, err)
	}
	if ok, err := s.Finish(t.Context(), c.Tenant, c.KeyHash, c.RequestID, charged, now); !ok || err != nil {
		t.Fatal(ok, err)
	}
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
	if rec := lookup(t, s, c); rec.RequestID != "req_next" || rec.State != reference.StateInProgress {
		t.Fatalf("reclaimed record %+v", rec)
	}
}

// The keeper renews a lease through the store while the call runs, so
// the owner is not taken over however long it holds the key; once it
// lets go, the key is free a lease later.
func TestStore_KeeperRenewsTheLease(t *testing.T) {
	s := newStore(t)
	const length = 300 * time.Millisecond
	c := newClaim("owner", time.Now(), length)
	mustClaim(t, s, c)
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
	eventually(t, "the lease let go is free a lease later", func() bool {
		rec, err := s.TakeOver(t.Context(), c.Tenant, c.KeyHash, "retry", time.Now(), length)
		if err != nil {
			t.Fatal(err)
		}
		return rec != nil
	})
}

// eventually waits up to 10 seconds for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
