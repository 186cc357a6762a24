package gatewaysim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

const jsonType = "application/json"

func TestValidation_BadParamsAre400NamingTheParam(t *testing.T) {
	long := strings.Repeat("x", 41)
	cases := []struct {
		name, contentType, body, param string
	}{
		{"missing amount", formType, "currency=usd", "amount"},
		{"empty amount", formType, "amount=&currency=usd", "amount"},
		{"amount not a number", formType, "amount=ten&currency=usd", "amount"},
		{"amount zero", formType, "amount=0&currency=usd", "amount"},
		{"amount negative", formType, "amount=-5&currency=usd", "amount"},
		{"amount fractional", formType, "amount=12.5&currency=usd", "amount"},
		{"amount too large", formType, "amount=100000000&currency=usd", "amount"},
		{"amount overflows", formType, "amount=99999999999999999999999&currency=usd", "amount"},
		{"amount twice", formType, "amount=1&amount=2&currency=usd", "amount"},
		{"missing currency", formType, "amount=100", "currency"},
		{"currency too long", formType, "amount=100&currency=usdx", "currency"},
		{"currency digits", formType, "amount=100&currency=us1", "currency"},
		{"unknown param", formType, "amount=100&currency=usd&order_id=o1", "order_id"},
		{"metadata not a hash", formType, "amount=100&currency=usd&metadata=x", "metadata"},
		{"metadata nested", formType, "amount=100&currency=usd&metadata[a][b]=x", "metadata[a][b]"},
		{"metadata key too long", formType, "amount=100&currency=usd&metadata[" + long + "]=x", "metadata[" + long + "]"},
		{"broken brackets", formType, "amount=100&currency=usd&metadata[order_id=x", "metadata[order_id"},
		{"bad escape in value", formType, "amount=%zz&currency=usd", "amount"},
		{"bad escape in name", formType, "am%zzount=1&currency=usd", "am%zzount"},
		{"amount nested", formType, "amount[x]=1&currency=usd", "amount[x]"},
		{"json amount string", jsonType, `{"amount":"ten","currency":"usd"}`, "amount"},
		{"json amount fraction", jsonType, `{"amount":12.5,"currency":"usd"}`, "amount"},
		{"json amount object", jsonType, `{"amount":{"v":1},"currency":"usd"}`, "amount[v]"},
		{"json currency number", jsonType, `{"amount":100,"currency":840}`, "currency"},
		{"json missing currency", jsonType, `{"amount":100}`, "currency"},
		{"json unknown field", jsonType, `{"amount":100,"currency":"usd","order_id":"o1"}`, "order_id"},
		{"json metadata string", jsonType, `{"amount":100,"currency":"usd","metadata":"x"}`, "metadata"},
		{"json metadata nested", jsonType, `{"amount":100,"currency":"usd","metadata":{"a":{"b":"c"}}}`, "metadata[a][b]"},
	}
	withSim(t, gatewaysim.Config{}, func(e *env) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.request(http.MethodPost, "/v1/charges", apiKey, tc.contentType, tc.body, "Idempotency-Key", "k-"+tc.name)
				typ, _, param := r.stripeError()
				if r.status != 400 || typ != "invalid_request_error" || param != tc.param {
					t.Fatalf("%d %s; want 400 invalid_request_error naming %q", r.status, r.body, tc.param)
				}
			})
		}
		if l := e.sim.Ledger(); len(l) != 0 {
			t.Fatalf("invalid requests moved money: %+v", l)
		}
	})
}

func TestValidation_MalformedBodiesAre400(t *testing.T) {
	for _, body := range []string{`{`, `[1,2]`, `null`, `"amount"`, `{"amount":100}{}`, `{"amount":100,}`, "\x00\xff"} {
		withSim(t, gatewaysim.Config{}, func(e *env) {
			r := e.request(http.MethodPost, "/v1/charges", apiKey, jsonType, body)
			if typ, _, _ := r.stripeError(); r.status != 400 || typ != "invalid_request_error" {
				t.Fatalf("body %q: %d %s", body, r.status, r.body)
			}
		})
	}
}

// A failed validation stores nothing under the key, as Stripe saves no
// result for it: the corrected request with the same key goes through.
func TestValidation_FailureStoresNoResult(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		if r := e.request(http.MethodPost, "/v1/charges", apiKey, formType, "amount=abc&currency=usd", "Idempotency-Key", "kv"); r.status != 400 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if r := e.charge("kv", "ord_v", 100); r.status != 200 {
			t.Fatalf("corrected request: %d %s", r.status, r.body)
		}
	})
}

func TestValidation_JSONAndFormAreTheSameRequest(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		form := e.charge("kj", "ord_j", 1250)
		body := `{"metadata":{"order_id":"ord_j"},"source":"tok_visa","currency":"usd","amount":1.25e3}`
		js := e.request(http.MethodPost, "/v1/charges", apiKey, jsonType, body, "Idempotency-Key", "kj")
		if form.status != 200 || js.status != 200 || js.chargeID() != form.chargeID() || js.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("form %d %s; json %d %s", form.status, form.body, js.status, js.body)
		}
		e.wantOneCharge("ord_j")
	})
}

func TestValidation_IdempotencyKeyTooLong(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		r := e.request(http.MethodPost, "/v1/charges", apiKey, formType, chargeForm("o", 1), "Idempotency-Key", strings.Repeat("k", 256))
		if _, _, param := r.stripeError(); r.status != 400 || param != "Idempotency-Key" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestValidation_UnknownChargeAndURL(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		id := e.charge("", "ord_u", 100).chargeID()
		if r := e.request(http.MethodGet, "/v1/charges/ch_nope", apiKey, "", ""); r.status != 404 {
			t.Fatalf("unknown charge: %d %s", r.status, r.body)
		}
		if r := e.request(http.MethodGet, "/v1/charges/"+id, "sk_test_other", "", ""); r.status != 404 {
			t.Fatalf("another account's charge: %d %s", r.status, r.body)
		}
		if r := e.request(http.MethodGet, "/v1/charges/"+id, apiKey, "", ""); r.status != 200 || r.chargeID() != id {
			t.Fatalf("own charge: %d %s", r.status, r.body)
		}
		for _, path := range []string{"/v1/refunds", "/v1/charges/x/y", "/v1/"} {
			r := e.request(http.MethodPost, path, apiKey, formType, "")
			if typ, _, _ := r.stripeError(); r.status != 404 || typ != "invalid_request_error" {
				t.Fatalf("%s: %d %s", path, r.status, r.body)
			}
		}
	})
}

func TestValidation_SearchQueries(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.charge("", "ord_s", 100)
		cases := []struct {
			query, param string
			status       int
			found        int
		}{
			{"query=" + url.QueryEscape(`metadata['order_id']:'ord_s'`), "", 200, 1},
			{"query=" + url.QueryEscape(`metadata['order_id']:'ord_s' AND amount:100 AND currency:'usd'`), "", 200, 1},
			{"query=" + url.QueryEscape(`metadata['order_id']:'ord_s' AND amount:101`), "", 200, 0},
			{"query=" + url.QueryEscape(`metadata['order_id']:'it\'s'`), "", 200, 0},
			{"", "query", 400, 0},
			{"query=" + url.QueryEscape(`metadata['order_id']:'ord_s' OR status:'failed'`), "query", 400, 0},
			{"query=" + url.QueryEscape(`created>5`), "query", 400, 0},
			{"query=" + url.QueryEscape(`metadata['order_id':'x'`), "query", 400, 0},
			{"query=" + url.QueryEscape(`metadata['order_id']:'x`), "query", 400, 0},
			{"query=status:succeeded&limit=0", "limit", 400, 0},
			{"query=status:succeeded&page=zz", "page", 400, 0},
			{"query=status:succeeded&bogus=1", "bogus", 400, 0},
		}
		for _, tc := range cases {
			r := e.request(http.MethodGet, "/v1/charges/search?"+tc.query, apiKey, "", "")
			var res struct{ Data []json.RawMessage }
			_ = json.Unmarshal(r.body, &res)
			_, _, param := r.stripeError()
			if r.status != tc.status || param != tc.param || len(res.Data) != tc.found {
				t.Fatalf("%s: %d %s; want %d naming %q with %d found", tc.query, r.status, r.body, tc.status, tc.param, tc.found)
			}
		}
	})
}

// FuzzChargeBody feeds arbitrary bodies to POST /v1/charges: the answer is
// a charge, a decline or a 400, never a 500 or a panic.
func FuzzChargeBody(f *testing.F) {
	for _, seed := range []struct{ ct, body string }{
		{formType, "amount=100&currency=usd&source=tok_visa&metadata[order_id]=o"},
		{formType, "amount=1&currency=USD&source[object]=card&source[number]=4000000000000002"},
		{formType, "expand[]=customer&expand[]=balance_transaction&amount=5&currency=eur"},
		{formType, "a[b[c]]=&&=&amount=%ff"},
		{jsonType, `{"amount":100,"currency":"usd","metadata":{"order_id":"o"},"shipping":{"address":{"line1":"x"}}}`},
		{jsonType, `{"amount":1e400,"currency":"usd"}`},
		{jsonType, `{"amount":[1],"currency":["usd"]}`},
		{"text/plain", "amount=1&currency=usd"},
	} {
		f.Add(seed.ct, seed.body)
	}
	sim := gatewaysim.New(gatewaysim.Config{})
	h := sim.Handler()
	f.Fuzz(func(t *testing.T, contentType, body string) {
		req := httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+apiKey)
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var b struct {
			Error *struct{ Type, Message string }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatalf("%d, body not JSON: %q", rec.Code, rec.Body.String())
		}
		switch {
		case rec.Code == 200 && b.Error == nil:
		case (rec.Code == 400 || rec.Code == 402) && b.Error != nil && b.Error.Type != "" && b.Error.Message != "":
		default:
			t.Fatalf("content type %q body %q: %d %s", contentType, body, rec.Code, rec.Body.String())
		}
	})
}

// FuzzSearchQuery: any query string is answered with results or a 400.
func FuzzSearchQuery(f *testing.F) {
	for _, q := range []string{`metadata['order_id']:'o'`, `status:"succeeded" AND amount:5`, `metadata[`, `'`, `a:`, `metadata['\`} {
		f.Add(q)
	}
	sim := gatewaysim.New(gatewaysim.Config{})
	h := sim.Handler()
	f.Fuzz(func(t *testing.T, q string) {
		req := httptest.NewRequest(http.MethodGet, "/v1/charges/search?query="+url.QueryEscape(q), nil)
		req.Header.Set("Authorization", "Bearer "+apiKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 && rec.Code != 400 {
			t.Fatalf("query %q: %d %s", q, rec.Code, rec.Body.String())
		}
	})
}
