package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// Of many concurrent claims on one key exactly one claims it; every other
// is answered with the winner's record (or nil, to look up), recorded
// before any gateway call.
func claimRaceHasOneWinner(t *testing.T, newStore NewStore) {
	s := newStore(t)
	base := NewClaim("r0", time.Now(), time.Minute)
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
			case existing != nil && (existing.State != reference.StateInProgress || existing.RequestID == c.RequestID):
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
	rec := Lookup(t, s, base)
	if rec.State != reference.StateInProgress || rec.Attempts != 1 || rec.LeaseOwner == "" || rec.RequestID == base.RequestID {
		t.Fatalf("the winner's record %+v", rec)
	}
}

// A record reads back as it was claimed, also after a conditional write
// rewrote it: numbers beyond a double's integers, bytes, text and times
// (to the microsecond) survive the store. A lost claim answers with it.
func recordReadsBackAsClaimed(t *testing.T, newStore NewStore) {
	s := newStore(t)
	now := time.Now().Truncate(time.Microsecond)
	c := NewClaim("r1", now, time.Minute)
	MustClaim(t, s, c)
	if _, err := s.Register(t.Context(), c.Tenant, c.KeyHash); err != nil { // a write rewrites the record
		t.Fatal(err)
	}
	rec := Lookup(t, s, c)
	if rec.Params != c.Params || rec.RequestID != c.RequestID || rec.LeaseOwner != "r1" || rec.Attempts != 1 ||
		string(rec.Fingerprint) != "fp" || rec.Key != c.Key || rec.Tenant != c.Tenant || string(rec.KeyHash) != string(c.KeyHash) ||
		!rec.CreatedAt.Equal(now) || !rec.LeaseUntil.Equal(now.Add(time.Minute)) ||
		!rec.ExpiresAt.Equal(now.Add(time.Minute)) || !rec.ForgetAt.Equal(now.Add(time.Hour)) || rec.Compacted {
		t.Fatalf("record %+v, claimed %+v", rec, c)
	}
	again := c
	again.RequestID = "req_late"
	ok, existing, err := s.Claim(t.Context(), again)
	if ok || err != nil {
		t.Fatalf("a claimed key was claimed again: %v %v", ok, err)
	}
	if existing != nil && existing.RequestID != c.RequestID {
		t.Fatalf("a lost claim was answered with %+v", existing)
	}
}
