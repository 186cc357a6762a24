package gatewaysim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// waitBound bounds every wait on a condition; tests never sleep.
const waitBound = 10 * time.Second

const apiKey = "sk_test_tenant_a"

// env is a simulator served over real HTTP on loopback: the provider's
// API on srv, the control API on ctl, as cmd/gateway-sim serves them.
type env struct {
	t   testing.TB
	sim *gatewaysim.Sim
	srv *httptest.Server
	ctl *httptest.Server
}

// withSim runs fn against a fresh simulator; the server and the simulator
// are closed when the test ends.
func withSim(t testing.TB, cfg gatewaysim.Config, fn func(e *env)) {
	t.Helper()
	sim := gatewaysim.New(cfg)
	srv, ctl := httptest.NewServer(sim.Handler()), httptest.NewServer(sim.ControlHandler())
	t.Cleanup(func() {
		sim.Close()
		srv.Close()
		ctl.Close()
	})
	fn(&env{t: t, sim: sim, srv: srv, ctl: ctl})
}

// reply is a response with its body read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// stripeError is the error object of a reply.
func (r reply) stripeError() (typ, code, param string) {
	var b struct {
		Error struct{ Type, Code, Param string }
	}
	_ = json.Unmarshal(r.body, &b)
	return b.Error.Type, b.Error.Code, b.Error.Param
}

func (r reply) chargeID() string {
	var b struct{ ID string }
	_ = json.Unmarshal(r.body, &b)
	return b.ID
}

// request sends one request with the given API key ("" for none) and
// headers, given as alternating name, value.
func (e *env) request(method, path, apiKey, contentType, body string, headers ...string) reply {
	e.t.Helper()
	return e.requestWith(e.srv.Client(), method, path, apiKey, contentType, body, headers...)
}

func (e *env) requestWith(c *http.Client, method, path, apiKey, contentType, body string, headers ...string) reply {
	e.t.Helper()
	r, err := e.do(c, method, path, apiKey, contentType, body, headers...)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// control sends one request to the control API.
func (e *env) control(method, path, contentType, body string) reply {
	e.t.Helper()
	r, err := send(e.ctl.Client(), method, e.ctl.URL+path, "", contentType, body)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

func (e *env) do(c *http.Client, method, path, apiKey, contentType, body string, headers ...string) (reply, error) {
	return send(c, method, e.srv.URL+path, apiKey, contentType, body, headers...)
}

func send(c *http.Client, method, url, apiKey, contentType, body string, headers ...string) (reply, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, err
}

const formType = "application/x-www-form-urlencoded"

// charge posts a form-encoded charge for order with the idempotency key
// ("" for none).
func (e *env) charge(key, order string, amount int) reply {
	e.t.Helper()
	return e.request(http.MethodPost, "/v1/charges", apiKey, formType, chargeForm(order, amount), idemHeader(key)...)
}

func chargeForm(order string, amount int) string {
	v := url.Values{}
	v.Set("amount", itoa(amount))
	v.Set("currency", "usd")
	v.Set("source", "tok_visa")
	v.Set("metadata[order_id]", order)
	return v.Encode()
}

func idemHeader(key string) []string {
	if key == "" {
		return nil
	}
	return []string{"Idempotency-Key", key}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// waitEvent waits, bounded, for an event matching pred.
func (e *env) waitEvent(pred func(gatewaysim.Event) bool) gatewaysim.Event {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	ev, err := e.sim.WaitEvent(ctx, pred)
	if err != nil {
		e.t.Fatalf("wait for event: %v", err)
	}
	return ev
}

func ofType(typ string) func(gatewaysim.Event) bool {
	return func(ev gatewaysim.Event) bool { return ev.Type == typ }
}

// ledgerFor returns the ledger entries of one order.
func (e *env) ledgerFor(order string) []gatewaysim.Charge {
	var out []gatewaysim.Charge
	for _, c := range e.sim.Ledger() {
		if c.OrderID == order {
			out = append(out, c)
		}
	}
	return out
}

// wantOneCharge fails unless the order has exactly one ledger entry.
func (e *env) wantOneCharge(order string) gatewaysim.Charge {
	e.t.Helper()
	got := e.ledgerFor(order)
	if len(got) != 1 {
		e.t.Fatalf("order %s: %d ledger entries, want 1: %+v", order, len(got), got)
	}
	return got[0]
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
