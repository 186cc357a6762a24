package reference_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/reference"
)

// withProvider serves a simulator speaking provider and returns the
// reference's client for it.
func withProvider(t *testing.T, provider reference.GatewayProvider) (*gatewaysim.Sim, *reference.Gateway) {
	t.Helper()
	sim := gatewaysim.New(gatewaysim.Config{Provider: string(provider), Seed: seq.Add(1)})
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(func() {
		sim.Close()
		srv.Close()
	})
	gw := reference.NewGateway(srv.URL, "sk_test_reference", 10*time.Second)
	gw.Provider = provider
	return sim, gw
}

// eachProvider runs test against a simulator of every provider the
// reference charges through.
func eachProvider(t *testing.T, test func(t *testing.T, p reference.GatewayProvider, sim *gatewaysim.Sim, gw *reference.Gateway)) {
	for _, p := range reference.GatewayProviders {
		t.Run(string(p), func(t *testing.T) {
			sim, gw := withProvider(t, p)
			test(t, p, sim, gw)
		})
	}
}

func gatewayRequest(order string) reference.GatewayRequest {
	return reference.GatewayRequest{RequestID: reference.NewID("req_"),
		ChargeParams: reference.ChargeParams{Amount: 1250, Currency: "usd", OrderID: order}}
}

// The reference charges through every provider, names the order where
// the trace finds it, and a re-send under the same request id learns what
// the first did.
func TestGateway_ChargesThroughEveryProvider(t *testing.T) {
	eachProvider(t, func(t *testing.T, p reference.GatewayProvider, sim *gatewaysim.Sim, gw *reference.Gateway) {
		ctx := context.Background()
		req := gatewayRequest("ord_1")
		first := gw.Charge(ctx, req)
		if first.Kind != reference.Charged || first.Charge == nil {
			t.Fatalf("charge: %+v", first)
		}
		if again := gw.Charge(ctx, req); again.Kind != reference.Charged || again.Charge.ID != first.Charge.ID {
			t.Fatalf("re-send: %+v, want %s again", again, first.Charge.ID)
		}
		led := sim.Ledger()
		if len(led) != 1 || led[0].OrderID != "ord_1" || led[0].ID != first.Charge.ID {
			t.Fatalf("ledger %+v, want one charge for ord_1", led)
		}
		if p == reference.CheckoutProvider != gw.LooksUpFirst() {
			t.Errorf("%s: LooksUpFirst %v", p, gw.LooksUpFirst())
		}
	})
}

// On Checkout.com a 5xx after the money moved keeps nothing under the
// key: FindCharge (the list by reference) finds the payment, which a
// re-send would have made twice.
func TestGateway_CheckoutFindsThePaymentA5xxHid(t *testing.T) {
	sim, gw := withProvider(t, reference.CheckoutProvider)
	sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.ChargeThenFail, Match: gatewaysim.Match{OrderID: "ord_2"}, Times: 1})
	ctx := context.Background()
	req := gatewayRequest("ord_2")
	if out := gw.Charge(ctx, req); out.Definitive() {
		t.Fatalf("charge then fail: %+v, want indeterminate", out)
	}
	c, err := gw.FindCharge(ctx, "ord_2", req.RequestID)
	if err != nil || c == nil || c.Status != "succeeded" {
		t.Fatalf("FindCharge: %+v, %v, want the payment", c, err)
	}
	if other, err := gw.FindCharge(ctx, "ord_2", "req_other"); err != nil || other != nil {
		t.Fatalf("FindCharge of another request id: %+v, %v, want none", other, err)
	}
}

func TestGateway_DeclinesThroughEveryProvider(t *testing.T) {
	eachProvider(t, func(t *testing.T, _ reference.GatewayProvider, sim *gatewaysim.Sim, gw *reference.Gateway) {
		sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Decline, Match: gatewaysim.Match{OrderID: "ord_3"}})
		if out := gw.Charge(context.Background(), gatewayRequest("ord_3")); out.Kind != reference.Declined {
			t.Fatalf("decline: %+v", out)
		}
	})
}

// On every provider, an indeterminate gateway answer leaves the key to
// recover, and the retry (on the other replica) ends in exactly one
// charge, the one it answers: on Checkout.com by finding the payment a
// 5xx hid before re-sending, on Adyen and Stripe by re-sending under the
// same key.
func TestServer_RecoversByEachProvidersRules(t *testing.T) {
	for _, p := range reference.GatewayProviders {
		for _, kind := range []gatewaysim.FaultKind{gatewaysim.FailBeforeCharge, gatewaysim.ChargeThenFail, gatewaysim.ChargeThenDrop} {
			t.Run(string(p)+"/"+string(kind), func(t *testing.T) {
				e := newEnv(t, envOptions{replicas: 2, provider: p})
				order := uniq("ord")
				e.sim.AddFault(gatewaysim.Fault{Kind: kind, Match: gatewaysim.Match{OrderID: order}, Times: 1})
				c := charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(order, 700)}
				if first := e.mustPost(e.replicas[0].url, c); first.status != http.StatusBadGateway {
					t.Fatalf("first: %s, want 502", first)
				}
				var again reply
				eventually(t, 20*time.Second, "a retry that completes", func() bool {
					again = e.mustPost(e.replicas[1].url, c)
					return again.status != http.StatusConflict
				})
				ledger := e.chargesFor(order)
				if again.status != http.StatusCreated || len(ledger) != 1 || ledger[0].ID != again.id(t) {
					t.Fatalf("retry %s, ledger %+v: want one charge, answered", again, ledger)
				}
			})
		}
	}
}

// A request sent under a key of its own (Hooks.GatewayKey) carries that
// key in the provider's header and still names its request id in the
// metadata, where a lookup finds it; NoKey sends none, and the provider
// deduplicates nothing.
func TestGateway_KeyApartFromTheRequestID(t *testing.T) {
	eachProvider(t, func(t *testing.T, p reference.GatewayProvider, sim *gatewaysim.Sim, gw *reference.Gateway) {
		ctx := context.Background()
		req := gatewayRequest("ord_k")
		req.Key = "tenant:key:" + req.RequestID
		if out := gw.Charge(ctx, req); out.Kind != reference.Charged {
			t.Fatalf("charge: %+v", out)
		}
		bare := gatewayRequest("ord_n")
		bare.NoKey = true
		for range 2 {
			if out := gw.Charge(ctx, bare); out.Kind != reference.Charged {
				t.Fatalf("charge without a key: %+v", out)
			}
		}
		led := sim.Ledger()
		if len(led) != 3 || led[0].IdempotencyKey != req.Key || led[0].Metadata["request_id"] != req.RequestID {
			t.Fatalf("ledger %+v: want the key %q and request id %q, then two charges without a key", led, req.Key, req.RequestID)
		}
		if led[1].IdempotencyKey != "" || led[2].IdempotencyKey != "" {
			t.Errorf("NoKey sent keys %q, %q", led[1].IdempotencyKey, led[2].IdempotencyKey)
		}
		if c, err := gw.FindCharge(ctx, "ord_k", req.RequestID); p != reference.AdyenProvider && (err != nil || c == nil || c.ID != led[0].ID) {
			t.Errorf("FindCharge by the request id: %+v, %v, want %s", c, err, led[0].ID)
		}
	})
}
