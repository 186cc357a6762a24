package storetest

import (
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// Only the holder of the request id finishes a key, only the lease owner
// under its request id releases or renews it, and a finished key is
// finished once.
func ownerTokenGuardsEveryWrite(t *testing.T, newStore NewStore) {
	s, c := claimed(t, newStore, "owner", time.Minute)
	now := c.Now
	ctx := t.Context()
	if ok, err := s.Finish(ctx, c.Tenant, c.KeyHash, "req_stale", Charged, now); ok || err != nil {
		t.Fatalf("a stale request id finished the key: %v %v", ok, err)
	}
	if err := s.Release(ctx, c.Tenant, c.KeyHash, c.RequestID, "intruder", now); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, c.Tenant, c.KeyHash, "req_stale", "owner", now); err != nil {
		t.Fatal(err)
	}
	stale := leaseOf(c)
	stale.RequestID = "req_stale"
	held, err := s.RenewLeases(ctx, "intruder", []reference.Lease{leaseOf(c)}, now.Add(time.Hour), time.Hour)
	if err != nil || len(held) != 0 {
		t.Fatalf("another owner renewed the lease: %v %v", held, err)
	}
	if held, err = s.RenewLeases(ctx, "owner", []reference.Lease{stale}, now.Add(time.Hour), time.Hour); err != nil || len(held) != 0 {
		t.Fatalf("a stale request id renewed the lease: %v %v", held, err)
	}
	if rec := Lookup(t, s, c); rec.State != reference.StateInProgress || rec.LeaseOwner != "owner" ||
		!rec.LeaseUntil.Equal(c.Now.Add(c.Lease).Truncate(time.Microsecond)) {
		t.Fatalf("a refused write changed the record: %+v", rec)
	}
	held, err = s.RenewLeases(ctx, "owner", []reference.Lease{leaseOf(c)}, now.Add(time.Hour), time.Hour)
	if err != nil || !held[leaseOf(c).ID()] {
		t.Fatalf("the owner could not renew: %v %v", held, err)
	}
	if ok, err := s.Finish(ctx, c.Tenant, c.KeyHash, c.RequestID, Charged, now); !ok || err != nil {
		t.Fatalf("the holder could not finish: %v %v", ok, err)
	}
	if ok, err := s.Finish(ctx, c.Tenant, c.KeyHash, c.RequestID, reference.Result{Status: 402}, now); ok || err != nil {
		t.Fatalf("a finished key was finished again: %v %v", ok, err)
	}
	rec := Lookup(t, s, c)
	if rec.State != reference.StateSucceeded || rec.Result.Status != 201 || rec.Result.ChargeID != "ch_1" ||
		string(rec.Result.Body) != `{"id":"ch_1"}` || rec.LeaseOwner != "" {
		t.Fatalf("finished record %+v", rec)
	}
}

// A renewal never shortens a lease and reports a lease still held even
// when it had nothing to extend; of several leases it names those held.
func renewalNeverShortens(t *testing.T, newStore NewStore) {
	s, c := claimed(t, newStore, "owner", time.Hour)
	other := NewClaim("owner", c.Now, time.Minute)
	MustClaim(t, s, other)
	gone := NewClaim("owner", c.Now, time.Minute)
	MustClaim(t, s, gone)
	finish(t, s, gone, c.Now)
	leases := []reference.Lease{leaseOf(c), leaseOf(other), leaseOf(gone)}
	held, err := s.RenewLeases(t.Context(), "owner", leases, c.Now, 10*time.Minute)
	if err != nil || len(held) != 2 || !held[leaseOf(c).ID()] || !held[leaseOf(other).ID()] {
		t.Fatalf("held %v %v, want the two unresolved leases", held, err)
	}
	if rec := Lookup(t, s, c); !rec.LeaseUntil.Equal(c.Now.Add(time.Hour).Truncate(time.Microsecond)) {
		t.Fatalf("a renewal shortened the lease to %v", rec.LeaseUntil)
	}
	if rec := Lookup(t, s, other); !rec.LeaseUntil.Equal(c.Now.Add(10 * time.Minute).Truncate(time.Microsecond)) {
		t.Fatalf("a renewal did not extend the lease: %v", rec.LeaseUntil)
	}
}

// Release keeps the request id and expires the lease, so the next retry
// takes the key over at once.
func releaseKeepsTheIntent(t *testing.T, newStore NewStore) {
	s, c := claimed(t, newStore, "owner", time.Hour)
	now := c.Now
	if err := s.Release(t.Context(), c.Tenant, c.KeyHash, c.RequestID, "owner", now); err != nil {
		t.Fatal(err)
	}
	if rec := Lookup(t, s, c); rec.State != reference.StateNeedsRecovery || rec.LeaseOwner != "" || rec.RequestID != c.RequestID {
		t.Fatalf("released record %+v", rec)
	}
	rec, err := s.TakeOver(t.Context(), c.Tenant, c.KeyHash, "retry", now, time.Minute)
	if err != nil || rec == nil || rec.RequestID != c.RequestID || rec.LeaseOwner != "retry" {
		t.Fatalf("a released key was not taken over under its request id: %+v %v", rec, err)
	}
}
