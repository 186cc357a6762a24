package gatewaysim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// adyenClient is a client of Adyen's Checkout API written from its
// reference (POST /v71/payments) and "API idempotency": X-API-Key, the key
// in Idempotency-Key, JSON bodies.
type adyenClient struct {
	t    *testing.T
	base string
}

type adyenReply struct {
	status int
	header http.Header
	body   []byte
	res    struct {
		PSPReference      string `json:"pspReference"`
		ResultCode        string `json:"resultCode"`
		MerchantReference string `json:"merchantReference"`
		RefusalReason     string `json:"refusalReason"`
		Amount            struct {
			Value    int64  `json:"value"`
			Currency string `json:"currency"`
		} `json:"amount"`
		Status    int    `json:"status"`
		ErrorCode string `json:"errorCode"`
		ErrorType string `json:"errorType"`
	}
}

func (c adyenClient) pay(key string, body map[string]any) adyenReply {
	c.t.Helper()
	h := map[string]string{"X-API-Key": "AQE_test"}
	if key != "" {
		h["Idempotency-Key"] = key
	}
	r := sendJSON(c.t, http.MethodPost, c.base+"/v71/payments", h, body)
	out := adyenReply{status: r.status, header: r.header, body: r.body}
	_ = json.Unmarshal(r.body, &out.res)
	return out
}

func adyenCard(number, reference string, value int) map[string]any {
	return map[string]any{
		"amount":          map[string]any{"value": value, "currency": "EUR"},
		"reference":       reference,
		"merchantAccount": "TestMerchant",
		"paymentMethod":   map[string]any{"type": "scheme", "number": number, "expiryMonth": "03", "expiryYear": "2030", "cvc": "737"},
	}
}

func withAdyen(t *testing.T, fn func(e *env, c adyenClient)) {
	withSim(t, gatewaysim.Config{Provider: gatewaysim.ProviderAdyen, Trace: gatewaysim.Trace{Reference: true}}, func(e *env) {
		fn(e, adyenClient{t: t, base: e.srv.URL})
	})
}

func TestAdyen_AuthorisedEchoesTheKeyAndReplays(t *testing.T) {
	withAdyen(t, func(e *env, c adyenClient) {
		r := c.pay("k1", adyenCard("4111111111111111", "ord_1", 1250))
		if r.status != http.StatusOK || r.res.ResultCode != "Authorised" || len(r.res.PSPReference) != 16 {
			t.Fatalf("payment: %d %s", r.status, r.body)
		}
		if r.res.MerchantReference != "ord_1" || r.res.Amount.Value != 1250 || r.res.Amount.Currency != "EUR" {
			t.Fatalf("payment %s, want ord_1 1250 EUR", r.body)
		}
		if r.header.Get("Idempotency-Key") != "k1" {
			t.Fatalf("the answer echoes no key: %v", r.header)
		}
		if again := c.pay("k1", adyenCard("4111111111111111", "ord_1", 1250)); !bytes.Equal(again.body, r.body) {
			t.Fatalf("replay %s, want the first answer", again.body)
		}
		if got := e.wantOneCharge("ord_1"); got.ID != r.res.PSPReference {
			t.Fatalf("ledger %+v, want %s", got, r.res.PSPReference)
		}
	})
}

func TestAdyen_RefusedIsA200(t *testing.T) {
	withAdyen(t, func(e *env, c adyenClient) {
		r := c.pay("k2", adyenCard("4000000000000002", "ord_2", 500))
		if r.status != http.StatusOK || r.res.ResultCode != "Refused" || r.res.RefusalReason == "" {
			t.Fatalf("refusal: %d %s", r.status, r.body)
		}
		if got := e.wantOneCharge("ord_2"); got.Status != gatewaysim.StatusFailed {
			t.Fatalf("ledger %+v, want the refusal", got)
		}
	})
}

func TestAdyen_KeyOfMoreThan64CharactersIsRefused(t *testing.T) {
	withAdyen(t, func(e *env, c adyenClient) {
		long := strings.Repeat("k", 65)
		if r := c.pay(long, adyenCard("4111111111111111", "ord_3", 100)); r.status != http.StatusUnprocessableEntity || r.res.ErrorType != "validation" {
			t.Fatalf("a 65-character key: %d %s, want 422 validation", r.status, r.body)
		}
		if n := len(e.ledgerFor("ord_3")); n != 0 {
			t.Fatalf("a refused key charged %d times", n)
		}
		if r := c.pay(long[:64], adyenCard("4111111111111111", "ord_3", 100)); r.res.ResultCode != "Authorised" {
			t.Fatalf("a 64-character key: %d %s, want Authorised", r.status, r.body)
		}
	})
}

// Adyen keeps the first result: after a 5xx that moved money, the same
// key finds the payment.
func TestAdyen_ResultKeptAfterA5xx(t *testing.T) {
	withAdyen(t, func(e *env, c adyenClient) {
		e.sim.AddFault(orderFault(gatewaysim.ChargeThenFail, "ord_4"))
		if r := c.pay("k4", adyenCard("4111111111111111", "ord_4", 100)); r.status != http.StatusInternalServerError {
			t.Fatalf("charge then fail: %d %s, want 500", r.status, r.body)
		}
		if r := c.pay("k4", adyenCard("4111111111111111", "ord_4", 100)); r.res.ResultCode != "Authorised" {
			t.Fatalf("re-sent: %d %s, want the kept payment", r.status, r.body)
		}
		e.wantOneCharge("ord_4")
	})
}

func TestAdyen_RefusalsAndConcurrentDuplicate(t *testing.T) {
	withAdyen(t, func(e *env, c adyenClient) {
		bad := adyenCard("4111111111111111", "", 100)
		if r := c.pay("k5", bad); r.status != http.StatusUnprocessableEntity || r.res.ErrorCode != "130" {
			t.Fatalf("no reference: %d %s, want 422 130", r.status, r.body)
		}
		send := func() adyenReply { return c.pay("k6", adyenCard("4111111111111111", "ord_6", 100)) }
		e.whileInFlight("ord_6", func() { send() }, func() {
			r := send()
			if r.status != http.StatusUnprocessableEntity || r.header.Get("Transient-Error") != "true" {
				t.Fatalf("a duplicate in flight: %d %v %s, want a transient 422", r.status, r.header, r.body)
			}
		})
		e.wantOneCharge("ord_6")
	})
}

func TestProfiles_AreData(t *testing.T) {
	if _, err := gatewaysim.ProfileNamed("braintree"); err == nil || !strings.Contains(err.Error(), "adyen, checkout, none, stripe") {
		t.Fatalf("an unknown provider: %v, want the list of profiles", err)
	}
	for _, p := range gatewaysim.Profiles() {
		if p.Source == "" || len(p.APIs) == 0 {
			t.Errorf("profile %s names no source or API", p.Name)
		}
		if (p.Name == gatewaysim.ProviderNone) != (p.Idempotency.Header == "") {
			t.Errorf("profile %s: key header %q", p.Name, p.Idempotency.Header)
		}
	}
	withSim(t, gatewaysim.Config{NoIdempotency: true}, func(e *env) {
		if e.sim.Profile().Name != gatewaysim.ProviderNone {
			t.Fatalf("NoIdempotency is profile %s, want none", e.sim.Profile().Name)
		}
	})
}
