package reference_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reference"
)

// Bad client input is answered 400 naming the field or header, 401, 413 or
// 415: never a 5xx, never a charge.
func TestServer_BadInputs(t *testing.T) {
	e := newEnv(t, envOptions{})
	good := chargeBody("ord_bad_inputs", 100)
	long := strings.Repeat("k", 256)
	cases := []struct {
		name   string
		c      charge
		status int
		field  string
	}{
		{"no key", charge{tenant: "sk_1", body: good}, 400, "Idempotency-Key"},
		{"empty quoted key", charge{tenant: "sk_1", key: `""`, body: good}, 400, "Idempotency-Key"},
		{"key too long", charge{tenant: "sk_1", key: long, body: good}, 400, "Idempotency-Key"},
		{"key with space", charge{tenant: "sk_1", key: "a b", body: good}, 400, "Idempotency-Key"},
		{"key not ASCII", charge{tenant: "sk_1", key: "ключ", body: good}, 400, "Idempotency-Key"},
		{"unterminated quote", charge{tenant: "sk_1", key: `"abc`, body: good}, 400, "Idempotency-Key"},
		{"bad escape", charge{tenant: "sk_1", key: `"a\x"`, body: good}, 400, "Idempotency-Key"},
		{"after closing quote", charge{tenant: "sk_1", key: `"a"b`, body: good}, 400, "Idempotency-Key"},
		{"two keys", charge{tenant: "sk_1", key: "k", body: good, header: map[string]string{}}, 400, "Idempotency-Key"},
		{"no bearer", charge{key: "k1", body: good}, 401, "Authorization"},
		{"basic auth", charge{key: "k1", body: good, header: map[string]string{"Authorization": "Basic dTpw"}}, 401, "Authorization"},
		{"empty bearer", charge{key: "k1", body: good, header: map[string]string{"Authorization": "Bearer "}}, 401, "Authorization"},
		{"body too large", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"pad":"` + strings.Repeat("x", 70000) + `"}`}, 413, "body"},
		{"not JSON", charge{tenant: "sk_1", key: "k1", body: `amount=1`}, 400, "body"},
		{"empty body", charge{tenant: "sk_1", key: "k1", body: ``}, 400, "body"},
		{"array", charge{tenant: "sk_1", key: "k1", body: `[1,2]`}, 400, "body"},
		{"duplicate member", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"amount":2,"currency":"usd","order_id":"o"}`}, 400, "body"},
		{"trailing garbage", charge{tenant: "sk_1", key: "k1", body: good + "x"}, 400, "body"},
		{"no amount", charge{tenant: "sk_1", key: "k1", body: `{"currency":"usd","order_id":"o"}`}, 400, "amount"},
		{"zero amount", charge{tenant: "sk_1", key: "k1", body: `{"amount":0,"currency":"usd","order_id":"o"}`}, 400, "amount"},
		{"negative amount", charge{tenant: "sk_1", key: "k1", body: `{"amount":-5,"currency":"usd","order_id":"o"}`}, 400, "amount"},
		{"fractional amount", charge{tenant: "sk_1", key: "k1", body: `{"amount":1.5,"currency":"usd","order_id":"o"}`}, 400, "amount"},
		{"string amount", charge{tenant: "sk_1", key: "k1", body: `{"amount":"100","currency":"usd","order_id":"o"}`}, 400, "amount"},
		{"huge amount", charge{tenant: "sk_1", key: "k1", body: `{"amount":1e300,"currency":"usd","order_id":"o"}`}, 400, "amount"},
		{"no currency", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"order_id":"o"}`}, 400, "currency"},
		{"upper currency", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"currency":"USD","order_id":"o"}`}, 400, "currency"},
		{"short currency", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"currency":"us","order_id":"o"}`}, 400, "currency"},
		{"number currency", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"currency":840,"order_id":"o"}`}, 400, "currency"},
		{"no order", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"currency":"usd"}`}, 400, "order_id"},
		{"empty order", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"currency":"usd","order_id":""}`}, 400, "order_id"},
		{"order not string", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"currency":"usd","order_id":7}`}, 400, "order_id"},
		{"order control char", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"currency":"usd","order_id":"a\nb"}`}, 400, "order_id"},
		{"metadata not object", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"currency":"usd","order_id":"o","metadata":[1]}`}, 400, "metadata"},
		{"description not string", charge{tenant: "sk_1", key: "k1", body: `{"amount":1,"currency":"usd","order_id":"o","description":{}}`}, 400, "description"},
		{"form media type", charge{tenant: "sk_1", key: "k1", body: good, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, "Content-Type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, e.replicas[0].url+"/v1/charges", strings.NewReader(tc.c.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.c.tenant != "" {
				req.Header.Set("Authorization", "Bearer "+tc.c.tenant)
			}
			if tc.c.key != "" {
				req.Header.Set("Idempotency-Key", tc.c.key)
			}
			for k, v := range tc.c.header {
				req.Header.Set(k, v)
			}
			if tc.name == "two keys" {
				req.Header.Add("Idempotency-Key", "k2")
			}
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var p struct {
				Status int    `json:"status"`
				Field  string `json:"field"`
				Detail string `json:"detail"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
				t.Fatalf("body: %v", err)
			}
			if resp.StatusCode != tc.status || p.Field != tc.field {
				t.Fatalf("got %d field %q (%s), want %d field %q", resp.StatusCode, p.Field, p.Detail, tc.status, tc.field)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	if n := len(e.sim.Ledger()); n != 0 {
		t.Fatalf("bad input moved money: %d ledger entries", n)
	}
}

// The quoted sf-string form of a key is the same key as the bare form.
func TestServer_QuotedKeyIsSameKey(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := charge{tenant: uniq("sk"), key: "order-7f3a-" + uniq("k"), body: chargeBody(uniq("ord"), 100)}
	first := e.mustPost(e.replicas[0].url, c)
	quoted := c
	quoted.key = `"` + c.key + `"`
	again := e.mustPost(e.replicas[0].url, quoted)
	if first.status != http.StatusCreated || !bytes.Equal(first.body, again.body) ||
		again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("bare: %s, quoted: %s", first, again)
	}
}

// /healthz and /metrics answer; the counters move with the protocol.
func TestServer_HealthAndMetrics(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(uniq("ord"), 100)}
	e.mustPost(e.replicas[0].url, c)
	e.mustPost(e.replicas[0].url, c)
	resp, err := e.client.Get(e.replicas[0].url + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = e.client.Get(e.replicas[0].url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	for _, want := range []string{"idemcheck_reference_claims_total 1", "idemcheck_reference_replays_total 1"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// Unit: key parsing, without a server.
func TestParseIdempotencyKey(t *testing.T) {
	cases := []struct {
		in   []string
		want string
		ok   bool
	}{
		{[]string{"abc"}, "abc", true},
		{[]string{`"abc"`}, "abc", true},
		{[]string{`"a\"b\\c"`}, `a"b\c`, true},
		{[]string{`abc"`}, `abc"`, true},
		{[]string{strings.Repeat("x", 255)}, strings.Repeat("x", 255), true},
		{nil, "", false},
		{[]string{""}, "", false},
		{[]string{`""`}, "", false},
		{[]string{`"a b"`}, "", false}, // a valid sf-string, but not a visible-ASCII key
		{[]string{strings.Repeat("x", 256)}, "", false},
		{[]string{"a", "b"}, "", false},
		{[]string{"tab\there"}, "", false},
	}
	for _, tc := range cases {
		got, err := reference.ParseIdempotencyKey(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseIdempotencyKey(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// Unit: fingerprints equal exactly for canonically equal bodies.
func TestFingerprint_CanonicalEquality(t *testing.T) {
	fp := func(body string) string {
		c, err := reference.Canonicalize([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return fmt.Sprintf("%x", reference.Fingerprint("POST", "/v1/charges", c))
	}
	same := [][2]string{
		{`{"a":1,"b":100}`, `{ "b": 1e2, "a": 1 }`},
		{`{"s":"A"}`, `{"s":"\u0041"}`},
		{`{"n":[1,2.0]}`, `{"n":[1.0,2]}`},
		{`{"x":{"b":1,"a":2}}`, "{\n\"x\":{\"a\":2,\"b\":1}\n}"},
	}
	for _, p := range same {
		if fp(p[0]) != fp(p[1]) {
			t.Errorf("%s and %s differ", p[0], p[1])
		}
	}
	differ := [][2]string{
		{`{"currency":"usd"}`, `{"currency":"USD"}`},
		{`{"a":1}`, `{"a":"1"}`},
		{`{"a":[1,2]}`, `{"a":[2,1]}`},
		{`{"a":null}`, `{}`},
	}
	for _, p := range differ {
		if fp(p[0]) == fp(p[1]) {
			t.Errorf("%s and %s collide", p[0], p[1])
		}
	}
	c, _ := reference.Canonicalize([]byte(`{}`))
	if bytes.Equal(reference.Fingerprint("POST", "/v1/charges", c), reference.Fingerprint("POST", "/v1/refunds", c)) {
		t.Error("path not covered by the fingerprint")
	}
}

// Unit: gateway answers classified by what they prove about money.
func TestClassify(t *testing.T) {
	cases := []struct {
		status int
		body   string
		want   reference.OutcomeKind
	}{
		{200, `{"id":"ch_1","object":"charge","status":"succeeded","amount":1}`, reference.Charged},
		{200, `{"id":"ch_1","status":"pending"}`, reference.Indeterminate},
		{200, `{"id":`, reference.Indeterminate}, // truncated: we cannot name the charge
		{402, `{"error":{"type":"card_error","code":"card_declined"}}`, reference.Declined},
		{400, `{"error":{"type":"invalid_request_error","code":"amount_too_large"}}`, reference.Rejected},
		{400, `{"error":{"type":"idempotency_error"}}`, reference.Indeterminate},
		{401, `{"error":{"type":"invalid_request_error"}}`, reference.Indeterminate},
		{409, `{"error":{"type":"idempotency_error"}}`, reference.Indeterminate},
		{429, ``, reference.Indeterminate},
		{500, `{"error":{"type":"api_error"}}`, reference.Indeterminate},
		{503, `<html>`, reference.Indeterminate},
	}
	for _, tc := range cases {
		if got := reference.Classify(tc.status, []byte(tc.body)).Kind; got != tc.want {
			t.Errorf("Classify(%d, %s) = %v, want %v", tc.status, tc.body, got, tc.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]string{"30d": "720h0m0s", "86400": "24h0m0s", "90s": "1m30s", "1.5h": "1h30m0s"} {
		d, err := reference.ParseDuration(in)
		if err != nil || d.String() != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %s", in, d, err, want)
		}
	}
	if _, err := reference.ParseDuration("soon"); err == nil {
		t.Error("ParseDuration accepted garbage")
	}
}

// Fuzz: ParseCharge never panics and never answers client input with
// anything but 400, 401, 413 or 415; equal JSON (an encoding/json round
// trip) fingerprints alike.
func FuzzParseCharge(f *testing.F) {
	for _, s := range []string{`{"amount":1250,"currency":"usd","order_id":"o"}`, `{"amount":1e2}`, `[]`, `"x"`,
		`{"a":{"b":[1,2,{"c":null}]}}`, `{"amount":-0.0}`, `{"\ud800":1}`, "{\"a\":\"\xff\"}", `1e400`} {
		f.Add(s, "key")
	}
	f.Fuzz(func(t *testing.T, body, key string) {
		r := httptest.NewRequest(http.MethodPost, "/v1/charges", strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer sk_fuzz")
		r.Header.Set("Idempotency-Key", key)
		req, err := reference.ParseCharge(r)
		if err != nil {
			var re *reference.RequestError
			if !asRequestError(err, &re) {
				t.Fatalf("not a RequestError: %v", err)
			}
			switch re.Status {
			case 400, 401, 413, 415:
			default:
				t.Fatalf("status %d for client input", re.Status)
			}
			return
		}
		var v any
		if json.Unmarshal([]byte(body), &v) != nil {
			return
		}
		round, _ := json.Marshal(v)
		c2, err := reference.Canonicalize(round)
		if err != nil {
			return // encoding/json accepted what JCS refuses (e.g. lone surrogates): refused, not misread
		}
		if fp := reference.Fingerprint("POST", "/v1/charges", c2); !bytes.Equal(fp, req.Fingerprint) {
			t.Fatalf("round trip changed the fingerprint:\n%s\n%s", req.Canonical, c2)
		}
	})
}

func asRequestError(err error, target **reference.RequestError) bool {
	re, ok := err.(*reference.RequestError)
	*target = re
	return ok
}
