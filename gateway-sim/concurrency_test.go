package gatewaysim_test

import (
	"bytes"
	"net/http"
	"sync"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// concurrently sends n identical charges for one key at once and returns
// the replies.
func (e *env) concurrently(n int, key, order string) []reply {
	e.t.Helper()
	replies := make([]reply, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			replies[i], errs[i] = e.do(e.srv.Client(), http.MethodPost, "/v1/charges", apiKey, formType, chargeForm(order, 700), idemHeader(key)...)
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			e.t.Fatal(err)
		}
	}
	return replies
}

// Without injected latency a decision is one critical section, so no
// duplicate can see the key in flight: every one of the 200 gets the same
// charge, byte for byte.
func TestConcurrency_200DuplicatesOneCharge(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		replies := e.concurrently(200, "dup-key", "ord_dup")
		c := e.wantOneCharge("ord_dup")
		replayed := 0
		for i, r := range replies {
			if r.status != http.StatusOK || !bytes.Equal(r.body, replies[0].body) || r.chargeID() != c.ID {
				t.Fatalf("reply %d: %d %s, want 200 with charge %s", i, r.status, r.body, c.ID)
			}
			if r.header.Get("Idempotent-Replayed") == "true" {
				replayed++
			}
		}
		if replayed != 199 {
			t.Fatalf("%d replays, want 199", replayed)
		}
	})
}

// With latency injected before the decision the key is in flight, and a
// duplicate arriving then gets Stripe's 409; still exactly one charge.
func TestConcurrency_InFlightDuplicateGets409(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Latency, Latency: 2 * time.Second, Times: 1})
		first := make(chan reply, 1)
		go func() {
			r, _ := e.do(e.srv.Client(), http.MethodPost, "/v1/charges", apiKey, formType, chargeForm("ord_slow", 700), "Idempotency-Key", "slow-key")
			first <- r
		}()
		e.waitEvent(func(ev gatewaysim.Event) bool { return ev.Fault == gatewaysim.Latency })
		for i, r := range e.concurrently(20, "slow-key", "ord_slow") {
			typ, code, _ := r.stripeError()
			if r.status != http.StatusConflict || typ != "idempotency_error" || code != "idempotency_key_in_use" {
				t.Fatalf("duplicate %d during the latency: %d %s", i, r.status, r.body)
			}
		}
		r := <-first
		c := e.wantOneCharge("ord_slow")
		if r.status != http.StatusOK || r.chargeID() != c.ID {
			t.Fatalf("first: %d %s", r.status, r.body)
		}
		if again := e.charge("slow-key", "ord_slow", 700); again.chargeID() != c.ID {
			t.Fatalf("after the decision: %d %s", again.status, again.body)
		}
	})
}

func TestConcurrency_DistinctKeysDistinctCharges(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Go(func() {
				_, _ = e.do(e.srv.Client(), http.MethodPost, "/v1/charges", apiKey, formType, chargeForm("ord_"+itoa(i), 100), "Idempotency-Key", "k-"+itoa(i))
			})
		}
		wg.Wait()
		seen := map[string]bool{}
		for _, c := range e.sim.Ledger() {
			if seen[c.ID] {
				t.Fatalf("charge id %s reused", c.ID)
			}
			seen[c.ID] = true
		}
		if len(seen) != 100 {
			t.Fatalf("%d charges, want 100", len(seen))
		}
	})
}
