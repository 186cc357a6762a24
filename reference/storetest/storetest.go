// Package storetest is reference.Store's contract (reference/store.go) as
// one test suite that every key store adapter runs against its real
// database: Run(t, newStore). An adapter's own tests keep only what is its
// own (a notification's payload, its schema); the guarantees the flow rests
// on are checked once, the same way for every store.
//
// # What Run checks
//
//   - Claim: insert-if-absent under a race (exactly one winner), the
//     record written as claimed (intent and owner before any gateway call).
//   - Finish, Release, RenewLeases: only the holder of the request id
//     (and, for Release and renewal, the lease owner) writes.
//   - TakeOver and LeaseStale: only after the lease expired, one taker per
//     key, concurrent sweepers sharing the work.
//   - Register: a waiter on an unresolved key is woken after a finish.
//   - Expire and Reclaim: compaction into tombstones, forgetting, reuse.
//   - Keeper: a renewed lease is never taken over.
//   - Clock (a reference.Clocked store): the database's clock, an instant
//     whatever its session's zone.
//
// Only tests import it.
package storetest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// NewStore returns an adapter over an empty database of the test's own.
type NewStore func(t *testing.T) reference.Store

// Run runs the contract's tests, each on a store from newStore.
func Run(t *testing.T, newStore NewStore) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore) })
	}
}

var cases = []struct {
	name string
	run  func(*testing.T, NewStore)
}{
	{"ClaimRaceHasOneWinner", claimRaceHasOneWinner},
	{"RecordReadsBackAsClaimed", recordReadsBackAsClaimed},
	{"OwnerTokenGuardsEveryWrite", ownerTokenGuardsEveryWrite},
	{"TakeOverOnlyAfterTheLeaseExpired", takeOverOnlyAfterTheLeaseExpired},
	{"RenewalNeverShortens", renewalNeverShortens},
	{"ReleaseKeepsTheIntent", releaseKeepsTheIntent},
	{"LeaseStaleSharesTheWork", leaseStaleSharesTheWork},
	{"RegisteredWaiterIsWoken", registeredWaiterIsWoken},
	{"ExpiryCompactsThenForgets", expiryCompactsThenForgets},
	{"ReclaimOnlyAForgottenKey", reclaimOnlyAForgottenKey},
	{"KeeperRenewsTheLease", keeperRenewsTheLease},
	{"ClockIsTheDatabases", clockIsTheDatabases},
}

// clockIsTheDatabases: a Clocked store reads its database's clock, which
// on this machine is the test's own within a second; a store that cannot
// read it is not Clocked, and skips.
func clockIsTheDatabases(t *testing.T, newStore NewStore) {
	c, ok := newStore(t).(reference.Clocked)
	if !ok {
		t.Skip("the store does not read its database's clock (reference.Clocked)")
	}
	before := time.Now()
	at, err := c.Clock(t.Context())
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if at.Before(before.Add(-time.Second)) || at.After(after.Add(time.Second)) {
		t.Errorf("Clock = %s, want within a second of [%s, %s]: the database's clock on this machine, as an instant",
			at.Format(time.RFC3339Nano), before.Format(time.RFC3339Nano), after.Format(time.RFC3339Nano))
	}
}

var seq atomic.Int64

// NewClaim is a claim on a fresh key, made at now by owner with a lease of
// lease, kept a minute and bound an hour. Its amount is beyond a double's
// exact integers and its description holds characters that need escaping,
// so a store that reformats either is caught.
func NewClaim(owner string, now time.Time, lease time.Duration) reference.Claim {
	n := seq.Add(1)
	key := fmt.Sprintf("key_%d", n)
	return reference.Claim{Tenant: reference.TenantID("sk_test"), KeyHash: reference.KeyHash(key), Key: key,
		Fingerprint: []byte("fp"), RequestID: fmt.Sprintf("req_%d", n),
		Params: reference.ChargeParams{Amount: 123456789012345, Currency: "usd", OrderID: fmt.Sprintf("ord_%d", n), Description: "a/b <c> 'd' \"é\""},
		Owner:  owner, Now: now, Lease: lease, TTL: time.Minute, Forget: time.Hour}
}

// Charged is a successful result.
var Charged = reference.Result{Status: 201, Body: []byte(`{"id":"ch_1"}`), ChargeID: "ch_1"}

// MustClaim claims c on s, failing the test unless it wins.
func MustClaim(t *testing.T, s reference.Store, c reference.Claim) {
	t.Helper()
	if ok, _, err := s.Claim(t.Context(), c); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
}

// claimed is a fresh store holding a fresh claim by owner, made now.
func claimed(t *testing.T, newStore NewStore, owner string, lease time.Duration) (reference.Store, reference.Claim) {
	t.Helper()
	s := newStore(t)
	c := NewClaim(owner, time.Now(), lease)
	MustClaim(t, s, c)
	return s, c
}

// Lookup reads c's record, failing the test on an error.
func Lookup(t *testing.T, s reference.Store, c reference.Claim) *reference.Record {
	t.Helper()
	rec, err := s.Lookup(t.Context(), c.Tenant, c.KeyHash)
	if err != nil {
		t.Fatalf("lookup: %v", err)
	}
	return rec
}

func finish(t *testing.T, s reference.Store, c reference.Claim, now time.Time) {
	t.Helper()
	if ok, err := s.Finish(t.Context(), c.Tenant, c.KeyHash, c.RequestID, Charged, now); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
}

func leaseOf(c reference.Claim) reference.Lease {
	return reference.Lease{Tenant: c.Tenant, KeyHash: c.KeyHash, RequestID: c.RequestID}
}

// Eventually waits up to 10 seconds for cond, polling.
func Eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
