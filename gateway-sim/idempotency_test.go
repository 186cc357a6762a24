package gatewaysim_test

import (
	"net/http"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

func TestIdempotency_KeyExpiresAfterTTL(t *testing.T) {
	clock := gatewaysim.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	withSim(t, gatewaysim.Config{IdempotencyTTL: time.Hour, Now: clock.Now}, func(e *env) {
		first := e.charge("kt", "ord_t", 100).chargeID()
		clock.Advance(time.Hour - time.Nanosecond)
		if got := e.charge("kt", "ord_t", 100); got.chargeID() != first {
			t.Fatalf("inside the TTL: %s, want replay of %s", got.body, first)
		}
		clock.Advance(time.Nanosecond) // the TTL runs from the first request, not the last
		second := e.charge("kt", "ord_t", 100)
		if second.status != 200 || second.chargeID() == first || second.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("after the TTL: %d %s", second.status, second.body)
		}
		if n := len(e.ledgerFor("ord_t")); n != 2 {
			t.Fatalf("%d charges, want 2 (the late retry double-charges)", n)
		}
		if c := e.sim.Ledger()[0]; !c.Created.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
			t.Fatalf("ledger time %v does not come from the injected clock", c.Created)
		}
	})
}

func TestIdempotency_ExpiredKeyMayCarryOtherParams(t *testing.T) {
	clock := gatewaysim.NewManualClock(time.Unix(1_700_000_000, 0))
	withSim(t, gatewaysim.Config{IdempotencyTTL: time.Minute, Now: clock.Now}, func(e *env) {
		e.charge("kx", "ord_x1", 100)
		clock.Advance(2 * time.Minute)
		if r := e.charge("kx", "ord_x2", 200); r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestIdempotency_ScopedPerAPIKey(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		a := e.request(http.MethodPost, "/v1/charges", "sk_test_a", formType, chargeForm("ord_a", 100), "Idempotency-Key", "shared")
		b := e.request(http.MethodPost, "/v1/charges", "sk_test_b", formType, chargeForm("ord_b", 300), "Idempotency-Key", "shared")
		if a.status != 200 || b.status != 200 || a.chargeID() == b.chargeID() {
			t.Fatalf("a: %d %s; b: %d %s", a.status, a.body, b.status, b.body)
		}
		if b.header.Get("Idempotent-Replayed") != "" {
			t.Fatal("tenant b got tenant a's replay")
		}
	})
}

func TestIdempotency_BasicAuthIsTheSameAccount(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		first := e.charge("kb", "ord_b", 100)
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/charges", stringsReader(chargeForm("ord_b", 100)))
		req.SetBasicAuth(apiKey, "")
		req.Header.Set("Content-Type", formType)
		req.Header.Set("Idempotency-Key", "kb")
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Idempotent-Replayed") != "true" || first.status != 200 {
			t.Fatalf("basic auth user %s did not share the bearer key's scope", apiKey)
		}
	})
}

func TestIdempotency_NoKeyNoDedup(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.charge("", "ord_n", 100)
		e.charge("", "ord_n", 100)
		if n := len(e.ledgerFor("ord_n")); n != 2 {
			t.Fatalf("%d charges, want 2", n)
		}
	})
}

func TestIdempotency_GatewayWithoutIdempotency(t *testing.T) {
	withSim(t, gatewaysim.Config{NoIdempotency: true}, func(e *env) {
		for range 3 {
			if r := e.charge("same-key", "ord_ni", 100); r.status != 200 || r.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("%d %v", r.status, r.header)
			}
		}
		if n := len(e.ledgerFor("ord_ni")); n != 3 {
			t.Fatalf("%d charges, want 3", n)
		}
		for _, c := range e.sim.Ledger() {
			if c.IdempotencyKey != "" {
				t.Fatalf("ledger records an ignored key: %+v", c)
			}
		}
	})
}
