package client_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/client"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/target"
)

func protocol(t *testing.T) target.Protocol {
	tg, err := target.Parse("t.yaml", []byte("name: t\nstart: {command: x}\npolicy: {ttl: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return tg.Protocol
}

// seen records what the server received, so tests can assert on the wire.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
	body []string
}

func server(t *testing.T, s *seen, status int, body string, hdr map[string]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs, s.body = append(s.reqs, r), append(s.body, string(b))
		s.mu.Unlock()
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClient_RecordsSuccessFields(t *testing.T) {
	var s seen
	srv := server(t, &s, 201, `{"id":"ch_1","status":"succeeded","amount":1250,"currency":"usd","order_id":"ord_1"}`, map[string]string{"Idempotent-Replayed": "true"})
	rec := history.NewRecorder(history.History{})
	c := client.New(protocol(t), rec, []string{srv.URL}, 5*time.Second)
	op := c.Do(context.Background(), client.Request{Client: 3, Replica: 0, Tenant: "tenant_a", Key: "k1", Order: "ord_1", Amount: 1250, Currency: "usd"})
	if op.Outcome != history.OK || op.Status != 201 || op.ChargeID != "ch_1" || op.RespAmount != 1250 || op.RespCurrency != "usd" || op.RespOrder != "ord_1" || !op.Replayed {
		t.Fatalf("op = %+v", op)
	}
	if op.Complete < op.Invoke {
		t.Fatalf("complete %v before invoke %v", op.Complete, op.Invoke)
	}
	r := s.reqs[0]
	if r.Header.Get("Idempotency-Key") != "k1" || r.Header.Get("Authorization") != "Bearer tenant_a" || r.URL.Path != "/v1/charges" {
		t.Fatalf("wire headers: %v path %s", r.Header, r.URL.Path)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(s.body[0]), &body); err != nil || body["order_id"] != "ord_1" || body["amount"] != 1250.0 {
		t.Fatalf("wire body %s: %v", s.body[0], err)
	}
	if h := rec.Snapshot(true); len(h.Ops) != 1 || h.Ops[0].ChargeID != "ch_1" {
		t.Fatalf("history ops = %+v", h.Ops)
	}
}

// TestClient_Classification: a retryable 4xx (408, 409, 423, 425, 429) and
// any failure carrying Retry-After (also a 400, 402 or 422) are
// indeterminate, never definitive failures; the client retries.
func TestClient_Classification(t *testing.T) {
	cases := []struct {
		status     int
		retryAfter string
		want       history.Outcome
	}{
		{200, "", history.OK}, {201, "1", history.OK}, {400, "", history.Fail}, {402, "", history.Fail}, {422, "", history.Fail},
		{400, "1", history.Info}, {402, "1", history.Info}, {422, "1", history.Info},
		{408, "", history.Info}, {409, "1", history.Info}, {423, "", history.Info}, {425, "", history.Info}, {429, "", history.Info},
		{500, "", history.Info}, {503, "1", history.Info},
	}
	for _, c := range cases {
		var s seen
		hdr := map[string]string{}
		if c.retryAfter != "" {
			hdr["Retry-After"] = c.retryAfter
		}
		srv := server(t, &s, c.status, `{}`, hdr)
		cl := client.New(protocol(t), history.NewRecorder(history.History{}), []string{srv.URL}, 5*time.Second)
		op := cl.Do(context.Background(), client.Request{Tenant: "a", Key: "k", Order: "o", Amount: 1, Currency: "usd"})
		if op.Outcome != c.want || op.Status != c.status || op.RetryAfter != c.retryAfter {
			t.Errorf("status %d Retry-After %q: op = %+v, want outcome %s", c.status, c.retryAfter, op, c.want)
		}
	}
}

func TestClient_TransportErrorIsInfo(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens any more: connection refused
	c := client.New(protocol(t), history.NewRecorder(history.History{}), []string{url}, time.Second)
	op := c.Do(context.Background(), client.Request{Tenant: "a", Key: "k", Order: "o", Amount: 1, Currency: "usd"})
	if op.Outcome != history.Info || op.Status != 0 || op.Error == "" {
		t.Fatalf("op = %+v", op)
	}
}

func TestClient_RawKeyHeaderBodyAndNoKey(t *testing.T) {
	var s seen
	srv := server(t, &s, 400, `{}`, nil)
	c := client.New(protocol(t), history.NewRecorder(history.History{}), []string{srv.URL}, time.Second)
	quoted, empty := `"k1"`, ""
	c.Do(context.Background(), client.Request{Tenant: "a", Key: "k1", KeyHeader: &quoted, Body: []byte(`{ "b": 1e2 }`)})
	c.Do(context.Background(), client.Request{Tenant: "a", Key: "", KeyHeader: &empty})
	op := c.Do(context.Background(), client.Request{Tenant: "a", NoKey: true})
	if got := s.reqs[0].Header.Get("Idempotency-Key"); got != `"k1"` || s.body[0] != `{ "b": 1e2 }` {
		t.Fatalf("quoted key %q body %q", got, s.body[0])
	}
	if v, ok := s.reqs[1].Header["Idempotency-Key"]; !ok || v[0] != "" {
		t.Fatalf("empty key header not sent: %v", s.reqs[1].Header)
	}
	if _, ok := s.reqs[2].Header["Idempotency-Key"]; ok || !op.NoKey {
		t.Fatalf("NoKey sent a key header: %v", s.reqs[2].Header)
	}
}

func TestClient_RoundRobin(t *testing.T) {
	var s0, s1 seen
	a, b := server(t, &s0, 201, `{}`, nil), server(t, &s1, 201, `{}`, nil)
	c := client.New(protocol(t), history.NewRecorder(history.History{}), []string{a.URL, b.URL}, time.Second)
	var replicas []string
	for i := 0; i < 4; i++ {
		op := c.Do(context.Background(), client.Request{Replica: client.RoundRobin, Tenant: "a", Key: "k", Order: "o", Amount: 1, Currency: "usd"})
		replicas = append(replicas, string(rune('0'+op.Replica)))
	}
	if strings.Join(replicas, "") != "0101" || len(s0.reqs) != 2 || len(s1.reqs) != 2 {
		t.Fatalf("replicas %v, counts %d %d", replicas, len(s0.reqs), len(s1.reqs))
	}
}

// TestClient_FieldsByJSONPointer: a Stripe-shaped
// server keeps the order under metadata and may use numeric ids; a target
// maps the order by JSON pointer, the request body nests it, and the
// response is read through the same pointer. A numeric id is stringified.
func TestClient_FieldsByJSONPointer(t *testing.T) {
	p := protocol(t)
	p.Fields.OrderID = "/metadata/order_id"
	var s seen
	srv := server(t, &s, 200, `{"id": 123456789012, "object": "charge", "amount": 1250, "currency": "usd", "status": "succeeded", "metadata": {"order_id": "o1"}}`, nil)
	cl := client.New(p, history.NewRecorder(history.History{}), []string{srv.URL}, 5*time.Second)
	op := cl.Do(context.Background(), client.Request{Tenant: "a", Key: "k", Order: "o1", Amount: 1250, Currency: "usd"})
	if op.Error != "" || op.ChargeID != "123456789012" || op.RespOrder != "o1" || op.RespAmount != 1250 || op.RespStatus != "succeeded" {
		t.Fatalf("op = %+v", op)
	}
	if want := `"metadata":{"order_id":"o1",`; !strings.Contains(s.body[0], want) {
		t.Fatalf("request body %s lacks %s", s.body[0], want)
	}
}

// TestClient_MissingNestedOrderStaysEmpty: a body without the mapped
// field records nothing; the checker grades it (R5), not the client.
func TestClient_MissingNestedOrderStaysEmpty(t *testing.T) {
	p := protocol(t)
	p.Fields.OrderID = "/metadata/order_id"
	var s seen
	srv := server(t, &s, 201, `{"id": "ch_1", "amount": 1250, "currency": "usd", "metadata": null}`, nil)
	cl := client.New(p, history.NewRecorder(history.History{}), []string{srv.URL}, 5*time.Second)
	op := cl.Do(context.Background(), client.Request{Tenant: "a", Key: "k", Order: "o1", Amount: 1250, Currency: "usd"})
	if op.Error != "" || op.ChargeID != "ch_1" || op.RespOrder != "" {
		t.Fatalf("op = %+v", op)
	}
}

// TestClient_OwnShape: a target with its own request shape gets the
// order in the path and a form body with its static fields; the op
// records the method, path, content type and body exactly as sent.
func TestClient_OwnShape(t *testing.T) {
	tg, err := target.Parse("own.yaml", []byte(`name: t
start: {command: x}
policy: {ttl: 1h}
protocol:
  path: /orders/{order_id}/payments
  encoding: form
  body: {amount: "{{.Amount}}", currency: "{{.Currency}}", customer: cus_123, metadata: {order_id: "{{.OrderID}}"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	var s seen
	srv := server(t, &s, 201, `{"id":"ch_1"}`, nil)
	cl := client.New(tg.Protocol, history.NewRecorder(history.History{}), []string{srv.URL}, 5*time.Second)
	op := cl.Do(context.Background(), client.Request{Tenant: "a", Key: "k", Order: "ord 1", Amount: 1250, Currency: "usd",
		Writing: target.Writing{Style: target.WriteReordered}})
	r := s.reqs[0]
	want := "metadata[order_id]=ord+1&customer=cus_123&currency=usd&amount=1250"
	if r.Method != "POST" || r.URL.EscapedPath() != "/orders/ord%201/payments" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || s.body[0] != want {
		t.Fatalf("sent %s %s %q %s", r.Method, r.URL.EscapedPath(), r.Header.Get("Content-Type"), s.body[0])
	}
	if op.Method != "POST" || op.Path != "/orders/ord%201/payments" || op.ContentType != "application/x-www-form-urlencoded" || op.Body != want {
		t.Fatalf("recorded %+v", op)
	}
	bad := cl.Do(context.Background(), client.Request{Tenant: "a", Key: "k2", Order: "o", Amount: 1, Currency: "usd", Writing: target.Writing{Style: target.WriteWhitespace}})
	if bad.Outcome != history.Info || !strings.Contains(bad.Error, "whitespace") || len(s.reqs) != 1 {
		t.Fatalf("an unwritable request: %+v (%d sent)", bad, len(s.reqs))
	}
}
