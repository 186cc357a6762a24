package garden

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// echo answers like the reference would: 201 with a flat charge naming
// the request's order, 409 for key "busy", and records the key it saw.
func echo(seen *[]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		*seen = append(*seen, key)
		if key == "busy" {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusConflict)
			return
		}
		var body struct {
			OrderID string `json:"order_id"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"ch_1","status":"succeeded","amount":100,"currency":"usd","order_id":"`+body.OrderID+`"}`)
	})
}

func serve(h http.Handler, key, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(body))
	r.Header.Set("Idempotency-Key", key)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestGarden_OpaqueKeysQuotedIsAnotherKey(t *testing.T) {
	var seen []string
	h := opaqueKeyHeader(echo(&seen))
	serve(h, "k1", `{}`)
	serve(h, `"k1"`, `{}`)
	serve(h, `"k1"`, `{}`)
	if seen[0] != "k1" || seen[1] == "k1" || seen[1] != seen[2] || strings.ContainsAny(seen[1], `" `) {
		t.Fatalf("keys seen by the reference: %q", seen)
	}
}

func TestGarden_InFlight429(t *testing.T) {
	var seen []string
	w := serve(conflictAs429(echo(&seen)), "busy", `{}`)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if w := serve(conflictAs429(echo(&seen)), "k", `{"order_id":"o"}`); w.Code != http.StatusCreated {
		t.Fatalf("a success became %d", w.Code)
	}
}

func TestGarden_StripeBody(t *testing.T) {
	var seen []string
	h := stripeDialect(echo(&seen))
	for _, req := range []string{`{"amount":100,"metadata":{"order_id":"ord_1"}}`, `{"amount":100,"order_id":"ord_1"}`} {
		w := serve(h, "k", req)
		var got map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		meta, _ := got["metadata"].(map[string]any)
		if w.Code != http.StatusCreated || got["order_id"] != nil || meta["order_id"] != "ord_1" || got["object"] != "charge" || got["id"] != "ch_1" {
			t.Errorf("request %s: %d %s", req, w.Code, w.Body)
		}
		if w.Header().Get("Idempotent-Replayed") != "true" || w.Header().Get("Content-Length") != "" && w.Header().Get("Content-Length") != itoa(w.Body.Len()) {
			t.Errorf("headers lost or wrong: %v", w.Header())
		}
	}
	if got := stripeShaped(http.StatusPaymentRequired, []byte(`{"error":{}}`)); string(got) != `{"error":{}}` {
		t.Errorf("an error body was rewritten: %s", got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestGarden_OwnShape: a form POST to /orders/{order_id}/payments
// reaches the reference as its JSON, with the path's order and every
// parameter nested by its brackets, whatever their order; a request
// without a required field is refused; the answer's currency is in
// capitals.
func TestGarden_OwnShape(t *testing.T) {
	var got []string
	ref := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(b))
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"ch_1","amount":1250,"currency":"usd","order_id":"ord_1"}`)
	})
	h := ownShapeDialect(ref)
	send := func(path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := send("/orders/ord_1/payments", "amount=1250&currency=usd&customer=cus_123&payment_method=pm_card_visa&metadata[order_id]=ord_1")
	send("/orders/ord_1/payments", "metadata%5Border_id%5D=ord_1&payment_method=pm_card_visa&customer=cus_123&currency=usd&amount=1250")
	want := `POST /v1/charges application/json {"amount":1250,"currency":"usd","customer":"cus_123","metadata":{"order_id":"ord_1"},"order_id":"ord_1","payment_method":"pm_card_visa"}`
	if len(got) != 2 || got[0] != want || got[1] != want {
		t.Fatalf("the reference saw\n%q\nwant twice\n%q", got, want)
	}
	if w.Code != http.StatusCreated || !strings.Contains(w.Body.String(), `"currency":"USD"`) {
		t.Errorf("answer %d %s", w.Code, w.Body)
	}
	if w := send("/orders/ord_1/payments", "amount=1250&currency=usd&customer=cus_123"); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "payment_method is required") || len(got) != 2 {
		t.Errorf("a body without payment_method: %d %s", w.Code, w.Body)
	}
}

func TestGarden_Registry(t *testing.T) {
	for _, name := range []string{"opaque-keys", "in-flight-429", "exact-ttl", "stripe-body", "own-shape"} {
		if _, err := Lookup(name); err != nil {
			t.Error(err)
		}
	}
	if _, err := Lookup("naive"); err == nil {
		t.Error("the garden serves a zoo member")
	}
}
