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

// quietStore is a store adapter without notifications: the PostgreSQL
// adapter with its Listen hidden.
type quietStore struct{ reference.Store }

// Over a store that does not notify, the hub is ready at once and wakes
// every waiter within a poll interval, so a waiter reads its key again
// without any notification.
func TestHub_PollsAStoreWithoutNotifications(t *testing.T) {
	e := newEnv(t, envOptions{replicas: -1})
	hub := reference.NewHub(quietStore{reference.NewPostgresStore(e.db)}, testLogger(t))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go hub.Run(ctx)
	select {
	case <-hub.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("a polling hub never became ready")
	}
	sub := hub.Subscribe(reference.TenantID("sk"), reference.KeyHash("k1"))
	defer sub.Close()
	for range 3 {
		select {
		case n := <-sub.C:
			if n.Result != nil {
				t.Fatalf("a poll carried a result: %+v", n)
			}
		case <-time.After(10 * reference.PollInterval):
			t.Fatal("a waiter was not woken by the poll")
		}
	}
}
