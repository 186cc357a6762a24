package reference_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// One LISTEN connection per replica fans notifications out to the waiters of
// the notified key only, and a finish notification carries its result.
func TestHub_FanOut(t *testing.T) {
	e := newEnv(t, envOptions{})
	hub := e.replicas[0].srv.Hub()
	tenant, kh, other := reference.TenantID("sk"), reference.KeyHash("k1"), reference.KeyHash("k2")
	subs := []*reference.Subscription{hub.Subscribe(tenant, kh), hub.Subscribe(tenant, kh)}
	bystander := hub.Subscribe(tenant, other)
	defer bystander.Close()
	if n := hub.Waiters(); n != 3 {
		t.Fatalf("waiters %d", n)
	}
	payload := reference.NotifyPayload(tenant, kh) + " 201 req_1 7b7d"
	if _, err := e.db.Exec(context.Background(), "SELECT pg_notify($1, $2)", reference.NotifyChannel, payload); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for i, s := range subs {
		var n reference.Notice
		for n.Result == nil { // an empty notice is a spurious wake-up, allowed
			select {
			case n = <-s.C:
			case <-timeout:
				t.Fatalf("subscriber %d not woken", i)
			}
		}
		if n.RequestID != "req_1" || n.Result.Status != 201 || string(n.Result.Body) != "{}" {
			t.Errorf("subscriber %d: %+v", i, n)
		}
		s.Close()
	}
	select {
	case n := <-bystander.C:
		if n.Result != nil {
			t.Fatalf("another key's waiter got its notice: %+v", n)
		}
	default:
	}
	if n := hub.Waiters(); n != 1 {
		t.Fatalf("waiters after close %d", n)
	}
}
