package gatewaysim_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// ckoClient is a Checkout.com client written from its API reference
// ("Request a payment or payout", "Get payment details", "Get payment
// lists", "Idempotency"): the secret key bare in Authorization, the key in
// Cko-Idempotency-Key, JSON bodies.
type ckoClient struct {
	t      *testing.T
	base   string
	secret string
}

// ckoPayment is the part of a payment the tests read.
type ckoPayment struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	Approved  bool   `json:"approved"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Reference string `json:"reference"`
}

type ckoReply struct {
	status  int
	header  http.Header
	body    []byte
	payment ckoPayment
}

func (c ckoClient) do(method, path, key string, body any) ckoReply {
	c.t.Helper()
	h := map[string]string{"Authorization": c.secret}
	if key != "" {
		h["Cko-Idempotency-Key"] = key
	}
	r := sendJSON(c.t, method, c.base+path, h, body)
	out := ckoReply{status: r.status, header: r.header, body: r.body}
	_ = json.Unmarshal(r.body, &out.payment)
	return out
}

// sendJSON sends body (nil for none) as JSON with the headers given: the
// transport the provider clients written from their references share.
func sendJSON(t *testing.T, method, url string, header map[string]string, body any) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// whileInFlight sends first in the background, held in flight by a
// latency fault aimed at order, and calls dup meanwhile.
func (e *env) whileInFlight(order string, first, dup func()) {
	e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Latency, Match: gatewaysim.Match{OrderID: order}, Latency: time.Second, Times: 1})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		first()
	}()
	e.waitEvent(func(ev gatewaysim.Event) bool { return ev.Fault == gatewaysim.Latency && ev.OrderID == order })
	dup()
	wg.Wait()
}

func ckoCard(number, reference string, amount int) map[string]any {
	return map[string]any{
		"source":    map[string]any{"type": "card", "number": number, "expiry_month": 6, "expiry_year": 2030, "cvv": "100"},
		"amount":    amount,
		"currency":  "USD",
		"reference": reference,
	}
}

func withCheckout(t *testing.T, fn func(e *env, c ckoClient)) {
	withSim(t, gatewaysim.Config{Provider: gatewaysim.ProviderCheckout, Trace: gatewaysim.Trace{Reference: true}}, func(e *env) {
		fn(e, ckoClient{t: t, base: e.srv.URL, secret: "sk_sbox_test"})
	})
}

func TestCheckout_PaymentAuthorizedAndReplayed(t *testing.T) {
	withCheckout(t, func(e *env, c ckoClient) {
		first := c.do(http.MethodPost, "/payments", "k1", ckoCard("4242424242424242", "ord_1", 1250))
		if first.status != http.StatusCreated || first.payment.Status != "Authorized" || !first.payment.Approved {
			t.Fatalf("payment: %d %s", first.status, first.body)
		}
		if first.payment.Reference != "ord_1" || first.payment.Currency != "USD" || first.payment.Amount != 1250 {
			t.Fatalf("payment %+v, want ord_1 1250 USD", first.payment)
		}
		again := c.do(http.MethodPost, "/payments", "k1", ckoCard("4242424242424242", "ord_1", 1250))
		if again.status != first.status || !bytes.Equal(again.body, first.body) {
			t.Fatalf("replay %d %s, want the first answer", again.status, again.body)
		}
		if got := e.wantOneCharge("ord_1"); got.ID != first.payment.ID || got.Reference != "ord_1" {
			t.Fatalf("ledger %+v, want %s with its reference", got, first.payment.ID)
		}
		if r := c.do(http.MethodPost, "/payments", "k1", ckoCard("4242424242424242", "ord_1", 999)); r.status != http.StatusUnprocessableEntity {
			t.Fatalf("the key with another amount: %d %s, want 422", r.status, r.body)
		}
		if g := c.do(http.MethodGet, "/payments/"+first.payment.ID, "", nil); g.status != http.StatusOK || g.payment.Status != "Authorized" {
			t.Fatalf("GET: %d %s", g.status, g.body)
		}
	})
}

func TestCheckout_DeclinedIsA201AndKept(t *testing.T) {
	withCheckout(t, func(e *env, c ckoClient) {
		r := c.do(http.MethodPost, "/payments", "k2", ckoCard("4000000000000002", "ord_2", 500))
		if r.status != http.StatusCreated || r.payment.Status != "Declined" || r.payment.Approved {
			t.Fatalf("decline: %d %s, want 201 Declined", r.status, r.body)
		}
		if again := c.do(http.MethodPost, "/payments", "k2", ckoCard("4000000000000002", "ord_2", 500)); again.payment.ID != r.payment.ID {
			t.Fatalf("a 2xx decline is kept: replay named %s, want %s", again.payment.ID, r.payment.ID)
		}
		if got := e.wantOneCharge("ord_2"); got.Status != gatewaysim.StatusFailed {
			t.Fatalf("ledger %+v, want the decline", got)
		}
	})
}

// After a 5xx the key keeps nothing: the same key pays again, and a
// server that looks the payment up by reference first learns it was made.
func TestCheckout_OnlyA2xxIsKept(t *testing.T) {
	withCheckout(t, func(e *env, c ckoClient) {
		e.sim.AddFault(orderFault(gatewaysim.ChargeThenFail, "ord_3"))
		body := ckoCard("4242424242424242", "ord_3", 700)
		if r := c.do(http.MethodPost, "/payments", "k3", body); r.status < 500 {
			t.Fatalf("charge then fail: %d, want a 5xx", r.status)
		}
		var list struct {
			TotalCount int          `json:"total_count"`
			Data       []ckoPayment `json:"data"`
		}
		l := c.do(http.MethodGet, "/payments?reference="+url.QueryEscape("ord_3"), "", nil)
		if err := json.Unmarshal(l.body, &list); err != nil || list.TotalCount != 1 || list.Data[0].Status != "Authorized" {
			t.Fatalf("the list by reference: %s, want the payment the 5xx hid", l.body)
		}
		if r := c.do(http.MethodPost, "/payments", "k3", body); r.status != http.StatusCreated || r.payment.ID == list.Data[0].ID {
			t.Fatalf("re-sent after the 5xx: %d %s, want a new payment", r.status, r.body)
		}
		if n := len(e.ledgerFor("ord_3")); n != 2 {
			t.Fatalf("%d payments for ord_3, want 2: Checkout.com keeps no result after a 5xx", n)
		}
	})
}

func TestCheckout_RefusalsAndConcurrentDuplicate(t *testing.T) {
	withCheckout(t, func(e *env, c ckoClient) {
		if r := (ckoClient{t: t, base: c.base}).do(http.MethodPost, "/payments", "k", ckoCard("4242424242424242", "o", 100)); r.status != http.StatusUnauthorized {
			t.Fatalf("no key: %d, want 401", r.status)
		}
		bad := ckoCard("4242424242424242", "ord_4", 100)
		delete(bad, "source")
		if r := c.do(http.MethodPost, "/payments", "k4", bad); r.status != http.StatusUnprocessableEntity || !bytes.Contains(r.body, []byte("payment_source_required")) {
			t.Fatalf("no source: %d %s, want 422 payment_source_required", r.status, r.body)
		}
		send := func() ckoReply {
			return c.do(http.MethodPost, "/payments", "k5", ckoCard("4242424242424242", "ord_5", 100))
		}
		e.whileInFlight("ord_5", func() { send() }, func() {
			if r := send(); r.status != http.StatusConflict {
				t.Fatalf("a duplicate in flight: %d %s, want 409", r.status, r.body)
			}
		})
		e.wantOneCharge("ord_5")
	})
}
