package reference_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/reference"
)

// slowClaimStore is the reference's store whose claim statement runs stall
// after its times were stamped (the statement waited that long for a pool
// connection), and whose sweeper runs once between the claim's commit and
// its reply reaching the owner.
type slowClaimStore struct {
	*reference.PostgresStore
	clock *fakeClock
	stall time.Duration
	srv   *reference.Server
	swept reference.SweepStats
}

func (s *slowClaimStore) Claim(ctx context.Context, c reference.Claim) (bool, *reference.Record, error) {
	s.clock.Advance(s.stall)
	ok, rec, err := s.PostgresStore.Claim(ctx, c)
	if ok && err == nil && s.srv != nil {
		s.swept, _ = s.srv.SweepOnce(ctx)
	}
	return ok, rec, err
}

// A claim whose statement came back later than its lease is taken over by
// the sweeper before its owner holds the lease; the owner must then not
// send the request id too (the gateway's idempotency is not the lock).
func TestServer_SlowClaimTakenOverIsNotSentAgain(t *testing.T) {
	clock := newFakeClock()
	var store *slowClaimStore
	e := newEnv(t, envOptions{clock: clock, config: func(c *reference.Config) {
		store = &slowClaimStore{PostgresStore: reference.NewPostgresStore(c.Pool), clock: clock, stall: 1800 * time.Millisecond}
		c.Store, c.Lease, c.RecoveryAfter = store, 1500*time.Millisecond, time.Second
	}})
	store.srv = e.replicas[0].srv
	order := uniq("ord")
	r := e.mustPost(e.replicas[0].url, charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(order, 5100)})
	if r.status != http.StatusCreated {
		t.Fatalf("charge: %s, want 201", r)
	}
	if store.swept.Recovered != 1 {
		t.Fatalf("the sweeper did not take over the claim born past its lease: %+v", store.swept)
	}
	for _, ev := range e.sim.Events() {
		if ev.Type == gatewaysim.EventReplay && ev.OrderID == order {
			t.Fatalf("request id %s was sent twice (the gateway replayed it): the owner sent it after the sweeper took its claim over", ev.IdempotencyKey)
		}
	}
	if l := e.chargesFor(order); len(l) != 1 {
		t.Fatalf("ledger holds %d charges for the order, want 1", len(l))
	}
}
