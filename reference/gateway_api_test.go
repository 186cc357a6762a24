package reference_test

import (
	"context"
	"strings"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/reference"
)

// withAPI makes every replica charge through api.
func withAPI(api reference.GatewayAPI) func(*reference.Config) {
	return func(c *reference.Config) { c.Gateway.API = api }
}

// The reference charging through PaymentIntents: one PaymentIntent
// created with confirm=true under the claim's request id, its one ledger
// charge named in the answer, the answer replayed on a retry, and a
// gateway decline answered 402 naming the declined charge.
func TestGatewayAPI_PaymentIntents(t *testing.T) {
	e := newEnv(t, envOptions{config: withAPI(reference.PaymentIntentsAPI)})
	base, tenant := e.replicas[0].url, uniq("sk")
	key, order := uniq("key"), uniq("ord")
	r := e.mustPost(base, charge{tenant: tenant, key: key, body: chargeBody(order, 1250)})
	l := e.chargesFor(order)
	if r.status != 201 || len(l) != 1 || r.id(t) != l[0].ID {
		t.Fatalf("answer %s, ledger %+v", r, l)
	}
	_, requestID, _, err := e.row(tenant, key)
	if err != nil || l[0].PaymentIntent == "" || l[0].Source != reference.DefaultPaymentMethod ||
		l[0].IdempotencyKey != requestID || l[0].Metadata["request_id"] != requestID {
		t.Fatalf("ledger %+v, request id %q (%v)", l[0], requestID, err)
	}
	again := e.mustPost(base, charge{tenant: tenant, key: key, body: chargeBody(order, 1250)})
	if again.status != 201 || again.id(t) != l[0].ID || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %s", again)
	}

	declined := uniq("ord")
	e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Decline, Match: gatewaysim.Match{OrderID: declined}})
	d := e.mustPost(base, charge{tenant: tenant, key: uniq("key"), body: chargeBody(declined, 1250)})
	errObj, _ := d.json(t)["error"].(map[string]any)
	if dl := e.chargesFor(declined); d.status != 402 || len(dl) != 1 || errObj["charge"] != dl[0].ID {
		t.Fatalf("decline: %s, ledger %+v", d, dl)
	}
}

// A PaymentIntent charged but answered 500 (charge_then_fail): the
// reference cannot know whether money moved and answers 502; the client's
// retry re-sends the same request id, which the gateway replays: one
// charge, and the client is told of it.
func TestGatewayAPI_PaymentIntentChargedThenFailed(t *testing.T) {
	e := newEnv(t, envOptions{config: withAPI(reference.PaymentIntentsAPI)})
	base, tenant := e.replicas[0].url, uniq("sk")
	key, order := uniq("key"), uniq("ord")
	e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.ChargeThenFail, Match: gatewaysim.Match{OrderID: order}, Times: 1})
	if r := e.mustPost(base, charge{tenant: tenant, key: key, body: chargeBody(order, 700)}); r.status != 502 {
		t.Fatalf("first answer %s, want 502", r)
	}
	var r reply
	eventually(t, 20*time.Second, "a retry that completes", func() bool {
		r = e.mustPost(base, charge{tenant: tenant, key: key, body: chargeBody(order, 700)})
		return r.status != 409
	})
	l := e.chargesFor(order)
	if r.status != 201 || len(l) != 1 || r.id(t) != l[0].ID {
		t.Fatalf("retry %s, ledger %+v", r, l)
	}
}

// FindCharge through PaymentIntents names the charge a PaymentIntent
// made, and finds nothing for a request id the gateway never saw.
func TestGatewayAPI_FindPaymentIntentCharge(t *testing.T) {
	e := newEnv(t, envOptions{replicas: -1})
	gw := reference.NewGateway(e.gw.URL, "sk_test_reference", 10*time.Second)
	gw.API = reference.PaymentIntentsAPI
	ctx, order := context.Background(), uniq("ord")
	p := reference.ChargeParams{Amount: 900, Currency: "usd", OrderID: order}
	out := gw.Charge(ctx, reference.GatewayRequest{RequestID: "req_1", ChargeParams: p})
	if out.Kind != reference.Charged || out.Charge.PaymentIntent == "" {
		t.Fatalf("charge: %+v", out)
	}
	found, err := gw.FindCharge(ctx, order, "req_1")
	if err != nil || found == nil || found.ID != out.Charge.ID || found.Status != "succeeded" || found.PaymentIntent != out.Charge.PaymentIntent {
		t.Fatalf("find = %+v, %v; want %s", found, err, out.Charge.ID)
	}
	if none, err := gw.FindCharge(ctx, order, "req_2"); none != nil || err != nil {
		t.Fatalf("another request id: %+v, %v", none, err)
	}
}

func TestGatewayAPI_Parse(t *testing.T) {
	for in, want := range map[string]reference.GatewayAPI{"": reference.ChargesAPI, "charges": reference.ChargesAPI, " payment_intents ": reference.PaymentIntentsAPI} {
		if got, err := reference.ParseGatewayAPI(in); got != want || err != nil {
			t.Errorf("ParseGatewayAPI(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := reference.ParseGatewayAPI("paymentintents"); err == nil {
		t.Error("an unknown API was accepted")
	}
	e := newEnv(t, envOptions{replicas: -1})
	_, err := reference.New(reference.Config{Pool: e.db, Gateway: &reference.Gateway{API: "sources"}})
	if err == nil || !strings.Contains(err.Error(), "Config.Gateway.API") {
		t.Errorf("reference.New with Gateway.API \"sources\": %v, want an error naming the field", err)
	}
}

// Unit: a PaymentIntent's success answer is read as the charge it made.
func TestGatewayAPI_ClassifyPaymentIntent(t *testing.T) {
	out := reference.Classify(200, []byte(`{"id":"pi_1","object":"payment_intent","amount":5,"currency":"usd","status":"succeeded","latest_charge":"ch_1","metadata":{"order_id":"o"}}`))
	if out.Kind != reference.Charged || out.Charge.ID != "ch_1" || out.Charge.PaymentIntent != "pi_1" || out.Charge.Amount != 5 {
		t.Fatalf("succeeded PaymentIntent: %+v %+v", out, out.Charge)
	}
	for _, body := range []string{
		`{"id":"pi_1","object":"payment_intent","status":"requires_confirmation","latest_charge":null}`,
		`{"id":"pi_1","object":"payment_intent","status":"requires_action","latest_charge":"ch_1"}`,
	} {
		if out := reference.Classify(200, []byte(body)); out.Kind != reference.Indeterminate {
			t.Errorf("Classify(200, %s) = %v, want indeterminate", body, out.Kind)
		}
	}
}
