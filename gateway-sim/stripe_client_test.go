package gatewaysim_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stripe/stripe-go/v82"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// stripeBackend is stripe-go's API backend pointed at the simulator, the
// way a service would configure it.
func (e *env) stripeBackend(retries int64) stripe.Backend {
	return stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:               stripe.String(e.srv.URL),
		HTTPClient:        e.srv.Client(),
		MaxNetworkRetries: stripe.Int64(retries),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
}

// stripeClient is a real stripe-go client whose API backend is the
// simulator.
func (e *env) stripeClient(key string, retries int64) *stripe.Client {
	backend := e.stripeBackend(retries)
	return stripe.NewClient(key, stripe.WithBackends(&stripe.Backends{
		API: backend, Connect: backend, Uploads: backend, MeterEvents: backend,
	}))
}

func chargeParams(order, key string) *stripe.ChargeCreateParams {
	p := &stripe.ChargeCreateParams{
		Amount:      stripe.Int64(1250),
		Currency:    stripe.String(string(stripe.CurrencyUSD)),
		Description: stripe.String("order " + order),
	}
	p.SetSource("tok_visa")
	p.AddMetadata("order_id", order)
	if key != "" {
		p.SetIdempotencyKey(key)
	}
	return p
}

func TestStripeGo_CreateRetrieveSearch(t *testing.T) {
	withSim(t, gatewaysim.Config{Seed: 1}, func(e *env) {
		sc, ctx := e.stripeClient(apiKey, 0), context.Background()
		ch, err := sc.V1Charges.Create(ctx, chargeParams("ord_1", ""))
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if ch.Status != stripe.ChargeStatusSucceeded || !ch.Paid || ch.Amount != 1250 || ch.Currency != "usd" || ch.Metadata["order_id"] != "ord_1" {
			t.Fatalf("charge = %+v", ch)
		}
		got, err := sc.V1Charges.Retrieve(ctx, ch.ID, nil)
		if err != nil || got.ID != ch.ID || got.Description != "order ord_1" {
			t.Fatalf("retrieve = %+v, %v", got, err)
		}
		var found []string
		for c, err := range sc.V1Charges.Search(ctx, &stripe.ChargeSearchParams{SearchParams: stripe.SearchParams{Query: "metadata['order_id']:'ord_1'"}}) {
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			found = append(found, c.ID)
		}
		if len(found) != 1 || found[0] != ch.ID {
			t.Fatalf("search found %v, want [%s]", found, ch.ID)
		}
		if l := e.wantOneCharge("ord_1"); l.ID != ch.ID || l.APIKey != apiKey || l.IdempotencyKey == "" {
			t.Fatalf("ledger entry = %+v (stripe-go sends a generated key for every POST)", l)
		}
	})
}

func TestStripeGo_SearchPaginates(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		sc, ctx := e.stripeClient(apiKey, 0), context.Background()
		for range 25 { // three pages of ten: a double-charged order must show every charge
			if _, err := sc.V1Charges.Create(ctx, chargeParams("ord_many", "")); err != nil {
				t.Fatal(err)
			}
		}
		n := 0
		for _, err := range sc.V1Charges.Search(ctx, &stripe.ChargeSearchParams{SearchParams: stripe.SearchParams{Query: `metadata["order_id"]:"ord_many" AND status:'succeeded'`}}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 25 {
			t.Fatalf("search found %d charges, want 25", n)
		}
	})
}

func TestStripeGo_IdempotentReplay(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		sc, ctx := e.stripeClient(apiKey, 0), context.Background()
		first, err := sc.V1Charges.Create(ctx, chargeParams("ord_2", "key-2"))
		if err != nil {
			t.Fatal(err)
		}
		again, err := sc.V1Charges.Create(ctx, chargeParams("ord_2", "key-2"))
		if err != nil {
			t.Fatal(err)
		}
		if again.ID != first.ID {
			t.Fatalf("replay id %s, want %s", again.ID, first.ID)
		}
		if h := again.LastResponse.Header.Get("Idempotent-Replayed"); h != "true" {
			t.Fatalf("Idempotent-Replayed = %q on the replay", h)
		}
		if h := first.LastResponse.Header.Get("Idempotent-Replayed"); h != "" {
			t.Fatalf("Idempotent-Replayed = %q on the first response", h)
		}
		if again.LastResponse.IdempotencyKey != "key-2" {
			t.Fatalf("echoed key = %q", again.LastResponse.IdempotencyKey)
		}
		e.wantOneCharge("ord_2")
	})
}

func TestStripeGo_KeyReusedWithOtherParams(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		sc, ctx := e.stripeClient(apiKey, 0), context.Background()
		if _, err := sc.V1Charges.Create(ctx, chargeParams("ord_3", "key-3")); err != nil {
			t.Fatal(err)
		}
		_, err := sc.V1Charges.Create(ctx, chargeParams("ord_other", "key-3"))
		var se *stripe.Error
		if !errors.As(err, &se) || se.Type != stripe.ErrorTypeIdempotency || se.HTTPStatusCode != 400 {
			t.Fatalf("err = %v, want a 400 idempotency_error", err)
		}
		if len(e.ledgerFor("ord_other")) != 0 {
			t.Fatal("a refused request moved money")
		}
	})
}

func TestStripeGo_CardDeclines(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Decline, Match: gatewaysim.Match{OrderID: "ord_fault"}})
		sc, ctx := e.stripeClient(apiKey, 0), context.Background()
		cases := []struct {
			order, source string
			decline       stripe.DeclineCode
		}{
			{"ord_fault", "tok_visa", "generic_decline"},
			{"ord_token", "tok_chargeDeclinedInsufficientFunds", "insufficient_funds"},
		}
		for _, tc := range cases {
			p := chargeParams(tc.order, "key-"+tc.order)
			p.SetSource(tc.source)
			_, err := sc.V1Charges.Create(ctx, p)
			se := wantCardDeclined(t, err, tc.decline)
			l := e.wantOneCharge(tc.order)
			if l.Status != gatewaysim.StatusFailed || se.ChargeID != l.ID {
				t.Fatalf("%s: ledger %+v, error names charge %q", tc.order, l, se.ChargeID)
			}
			_, err = sc.V1Charges.Create(ctx, p) // a decline is stored and replayed
			if again := wantCardDeclined(t, err, tc.decline); again.ChargeID != se.ChargeID {
				t.Fatalf("replayed decline names %s, want %s", again.ChargeID, se.ChargeID)
			}
			e.wantOneCharge(tc.order)
		}
	})
}

func wantCardDeclined(t *testing.T, err error, decline stripe.DeclineCode) *stripe.Error {
	t.Helper()
	var se *stripe.Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *stripe.Error", err)
	}
	var ce *stripe.CardError
	if se.Code != stripe.ErrorCodeCardDeclined || se.Type != stripe.ErrorTypeCard || se.HTTPStatusCode != 402 ||
		se.DeclineCode != decline || !errors.As(err, &ce) {
		t.Fatalf("err = %+v, want 402 card_error card_declined %s", se, decline)
	}
	return se
}

// TestStripeGo_RetriesThroughDroppedConnection shows the protocol working as
// designed: the gateway charges then drops the connection, stripe-go retries
// the network error with the same key, the retry replays the committed
// charge, and the ledger holds one charge.
func TestStripeGo_RetriesThroughDroppedConnection(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.ChargeThenDrop, Match: gatewaysim.Match{OrderID: "ord_4"}, Times: 1})
		ch, err := e.stripeClient(apiKey, 2).V1Charges.Create(context.Background(), chargeParams("ord_4", "key-4"))
		if err != nil {
			t.Fatal(err)
		}
		if l := e.wantOneCharge("ord_4"); l.ID != ch.ID {
			t.Fatalf("client got %s, ledger has %s", ch.ID, l.ID)
		}
		if ch.LastResponse.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatal("the successful answer should be the replay")
		}
	})
}

// TestStripeGo_ChargeThenFailSurfacesAs500 pins a stripe-go v82 behaviour a
// service must handle itself: an API error response, 500 included, is never
// retried by the library (only network errors and 429 lock_timeout are), so
// the service sees a 500 for a charge that was made, and only its own retry
// with the same key finds out.
func TestStripeGo_ChargeThenFailSurfacesAs500(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.ChargeThenFail, Match: gatewaysim.Match{OrderID: "ord_6"}, Times: 1})
		sc, ctx := e.stripeClient(apiKey, 2), context.Background()
		_, err := sc.V1Charges.Create(ctx, chargeParams("ord_6", "key-6"))
		var se *stripe.Error
		if !errors.As(err, &se) || se.HTTPStatusCode != 500 || se.Type != stripe.ErrorTypeAPI {
			t.Fatalf("err = %v, want a 500 api_error", err)
		}
		l := e.wantOneCharge("ord_6") // the money moved all the same
		ch, err := sc.V1Charges.Create(ctx, chargeParams("ord_6", "key-6"))
		if err != nil || ch.ID != l.ID {
			t.Fatalf("retry = %v, %v; want the committed charge %s", ch, err, l.ID)
		}
		e.wantOneCharge("ord_6")
	})
}

func TestStripeGo_NoAPIKey(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		r := e.request("POST", "/v1/charges", "", formType, chargeForm("ord_5", 100))
		if typ, _, _ := r.stripeError(); r.status != 401 || typ != "invalid_request_error" {
			t.Fatalf("status %d body %s", r.status, r.body)
		}
	})
}
