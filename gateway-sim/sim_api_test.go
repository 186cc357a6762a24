package gatewaysim_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

func TestSimAPI_LedgerJSON(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		id := e.charge("kl", "ord_l", 1250).chargeID()
		r := e.control(http.MethodGet, "/_sim/ledger", "", "")
		var raw struct{ Charges []map[string]any }
		if err := json.Unmarshal(r.body, &raw); err != nil || len(raw.Charges) != 1 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		for _, field := range []string{"id", "order_id", "amount", "currency", "status", "idempotency_key", "api_key", "created"} {
			if _, ok := raw.Charges[0][field]; !ok {
				t.Fatalf("ledger entry lacks %q: %s", field, r.body)
			}
		}
		if raw.Charges[0]["id"] != id || raw.Charges[0]["order_id"] != "ord_l" || raw.Charges[0]["idempotency_key"] != "kl" {
			t.Fatalf("%s", r.body)
		}
		if r := e.control(http.MethodPost, "/_sim/reset", "", ""); r.status != http.StatusNoContent {
			t.Fatalf("reset: %d", r.status)
		}
		if r := e.control(http.MethodGet, "/_sim/ledger", "", ""); string(r.body) != "{\"charges\":[]}\n" {
			t.Fatalf("after reset: %s", r.body)
		}
	})
}

func TestSimAPI_FaultsOverHTTP(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		r := e.control(http.MethodPost, "/_sim/faults", jsonType, `{"kind":"latency","match":{"order_id":"o1","nth":0},"latency":"200ms","times":3}`)
		var added struct{ ID string }
		if err := json.Unmarshal(r.body, &added); err != nil || r.status != http.StatusCreated || added.ID == "" {
			t.Fatalf("add: %d %s", r.status, r.body)
		}
		fs := e.sim.Faults()
		want := gatewaysim.Fault{Kind: gatewaysim.Latency, Match: gatewaysim.Match{OrderID: "o1"}, Latency: 200 * time.Millisecond, Times: 3}
		if len(fs) != 1 || fs[0].Fault != want || fs[0].ID != added.ID {
			t.Fatalf("installed %+v, want %+v", fs, want)
		}
		list := e.control(http.MethodGet, "/_sim/faults", "", "")
		if !strings.Contains(string(list.body), `"latency":"200ms"`) {
			t.Fatalf("list: %s", list.body)
		}
		for _, bad := range []string{`{"kind":"explode"}`, `{"kind":"latency"}`, `{"kind":"latency","latency":200}`,
			`{"kind":"decline","match":{"order":"o1"}}`, `{"kind":"decline","match":{"probability":2}}`, `{`} {
			if r := e.control(http.MethodPost, "/_sim/faults", jsonType, bad); r.status != 400 {
				t.Fatalf("%s: %d %s", bad, r.status, r.body)
			}
		}
		if r := e.control(http.MethodDelete, "/_sim/faults/"+added.ID, "", ""); r.status != http.StatusNoContent {
			t.Fatalf("remove: %d", r.status)
		}
		if r := e.control(http.MethodDelete, "/_sim/faults/"+added.ID, "", ""); r.status != http.StatusNotFound {
			t.Fatalf("remove again: %d", r.status)
		}
		e.sim.AddFault(want)
		if r := e.control(http.MethodDelete, "/_sim/faults", "", ""); r.status != http.StatusNoContent || len(e.sim.Faults()) != 0 {
			t.Fatalf("clear: %d", r.status)
		}
	})
}

func TestSimAPI_ReleaseOverHTTP(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(orderFault(gatewaysim.ChargeThenHang, "ord_rh"))
		held := make(chan reply, 1)
		go func() {
			r, _ := e.do(e.srv.Client(), http.MethodPost, "/v1/charges", apiKey, formType, chargeForm("ord_rh", 100))
			held <- r
		}()
		hold := e.waitEvent(ofType(gatewaysim.EventHold))
		holds := e.control(http.MethodGet, "/_sim/holds", "", "")
		if !strings.Contains(string(holds.body), hold.HoldID) {
			t.Fatalf("holds: %s", holds.body)
		}
		if r := e.control(http.MethodPost, "/_sim/release?hold=hold_999", "", ""); r.status != 404 {
			t.Fatalf("unknown hold: %d", r.status)
		}
		if r := e.control(http.MethodPost, "/_sim/release?hold="+hold.HoldID, "", ""); r.status != http.StatusNoContent {
			t.Fatalf("release: %d %s", r.status, r.body)
		}
		if r := <-held; r.status != 200 {
			t.Fatalf("held: %d", r.status)
		}
	})
}

// The SSE stream starts with everything since reset, resumes with since,
// and carries one JSON event per data line.
func TestSimAPI_EventStream(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.charge("k1", "ord_e1", 100)
		e.charge("k1", "ord_e1", 100)
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.ctl.URL+"/_sim/events?since=1", nil)
		resp, err := e.ctl.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("content type %q", ct)
		}
		events := make(chan gatewaysim.Event)
		go readEvents(resp, events)
		if ev := recv(t, events); ev.Seq != 2 || ev.Type != gatewaysim.EventReplay {
			t.Fatalf("first streamed event %+v, want seq 2 replay", ev)
		}
		e.charge("k2", "ord_e2", 100) // live
		if ev := recv(t, events); ev.Seq != 3 || ev.Type != gatewaysim.EventCharge || ev.OrderID != "ord_e2" {
			t.Fatalf("live event %+v", ev)
		}
	})
}

func readEvents(resp *http.Response, out chan<- gatewaysim.Event) {
	defer close(out)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev gatewaysim.Event
			if json.Unmarshal([]byte(data), &ev) == nil {
				out <- ev
			}
		}
	}
}

func TestSimAPI_LongPoll(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.charge("", "ord_lp", 100)
		r := e.control(http.MethodGet, "/_sim/events?since=0&wait=5s", "", "")
		var got struct {
			Events []gatewaysim.Event
			Next   int64
		}
		if err := json.Unmarshal(r.body, &got); err != nil || len(got.Events) == 0 || got.Events[0].Type != "charge" || got.Next < 1 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		empty := e.control(http.MethodGet, "/_sim/events?since=99&wait=1ms", "", "")
		if !strings.Contains(string(empty.body), `"events":[]`) {
			t.Fatalf("timed-out poll: %s", empty.body)
		}
		if bad := e.control(http.MethodGet, "/_sim/events?since=x", "", ""); bad.status != 400 {
			t.Fatalf("bad since: %d", bad.status)
		}
	})
}

// Subscribers have unbounded queues: a subscriber that reads nothing while
// thousands of events happen neither blocks the gateway nor loses events.
func TestEvents_SlowSubscriberMissesNothing(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		ch, cancel := e.sim.Subscribe()
		defer cancel()
		const n = 500
		for i := range n {
			e.charge("", "ord_"+itoa(i), 100)
		}
		for i := range n {
			ev := recv(t, ch)
			if ev.Type != gatewaysim.EventCharge || ev.OrderID != "ord_"+itoa(i) {
				t.Fatalf("event %d: %+v", i, ev)
			}
		}
		cancel()
		for range ch { // closed after cancel
		}
	})
}

func TestEvents_WaitEventBounded(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if _, err := e.sim.WaitEvent(ctx, ofType("never")); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		e.sim.Close()
		if _, err := e.sim.WaitEvent(context.Background(), ofType("never")); !errors.Is(err, gatewaysim.ErrClosed) {
			t.Fatalf("after close: %v", err)
		}
	})
}

// Seq never restarts, so a consumer resuming after a reset is not confused.
func TestEvents_SeqSurvivesReset(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.charge("", "ord_1", 100)
		e.sim.Reset()
		e.charge("", "ord_2", 100)
		evs := e.sim.Events()
		if len(evs) != 2 || evs[0].Type != gatewaysim.EventReset || evs[0].Seq != 2 || evs[1].Seq != 3 {
			t.Fatalf("events after reset: %+v", evs)
		}
	})
}

// recv receives one event, bounded.
func recv(t *testing.T, ch <-chan gatewaysim.Event) gatewaysim.Event {
	t.Helper()
	timer := time.NewTimer(waitBound)
	defer timer.Stop()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("event channel closed")
		}
		return ev
	case <-timer.C:
		t.Fatal("no event within the bound")
	}
	return gatewaysim.Event{}
}

// The provider's address serves the provider's API alone: the control
// paths are paths the provider does not have, answered with that
// provider's own 404 (Stripe's error object, Checkout.com's empty 404,
// Adyen's error object), and they change nothing.
func TestSimAPI_NotOnTheProvidersAddress(t *testing.T) {
	for _, c := range []struct {
		provider, body string
	}{
		{gatewaysim.ProviderStripe, `"Unrecognized request URL`},
		{gatewaysim.ProviderNone, `"Unrecognized request URL`},
		{gatewaysim.ProviderCheckout, ``},
		{gatewaysim.ProviderAdyen, `"errorType":"security"`},
	} {
		withSim(t, gatewaysim.Config{Provider: c.provider}, func(e *env) {
			id := e.sim.AddFault(orderFault(gatewaysim.Decline, "ord_x"))
			for _, req := range []struct{ method, path string }{
				{http.MethodPost, "/_sim/reset"}, {http.MethodDelete, "/_sim/faults"},
				{http.MethodDelete, "/_sim/faults/" + id}, {http.MethodGet, "/_sim/ledger"},
			} {
				r := e.request(req.method, req.path, apiKey, "", "")
				if r.status != http.StatusNotFound || !strings.Contains(string(r.body), c.body) || strings.Contains(string(r.body), "charges") {
					t.Errorf("%s: %s %s on the provider's address: %d %s, want its 404", c.provider, req.method, req.path, r.status, r.body)
				}
			}
			if fs := e.sim.Faults(); len(fs) != 1 || fs[0].ID != id {
				t.Errorf("%s: the faults after the requests: %+v, want %s still armed", c.provider, fs, id)
			}
			if r := e.control(http.MethodGet, "/_sim/faults", "", ""); r.status != http.StatusOK || !strings.Contains(string(r.body), id) {
				t.Errorf("%s: GET /_sim/faults on the control address: %d %s", c.provider, r.status, r.body)
			}
		})
	}
}

// Every request that is not the provider's API is recorded as an
// EventForeign event with its method, path and the path it came by; the
// API's own requests are not.
func TestSimAPI_ForeignRequestsAreRecorded(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.charge("k1", "ord_f", 100)
		via := httptest.NewServer(e.sim.HandlerVia("replica0->gateway"))
		defer via.Close()
		if r, err := send(via.Client(), http.MethodDelete, via.URL+"/_sim/faults", apiKey, "", ""); err != nil || r.status != http.StatusNotFound {
			t.Fatalf("DELETE /_sim/faults via a link: %v %d", err, r.status)
		}
		ev := e.waitEvent(ofType(gatewaysim.EventForeign))
		if ev.Method != http.MethodDelete || ev.Path != "/_sim/faults" || ev.Via != "replica0->gateway" || !gatewaysim.IsHarnessPath(ev.Path) {
			t.Fatalf("foreign event %+v", ev)
		}
		for _, p := range []string{"/v1/charges", "/v1/refunds", "/_simple"} {
			if gatewaysim.IsHarnessPath(p) {
				t.Errorf("IsHarnessPath(%q) = true", p)
			}
		}
		for _, p := range []string{"/_sim", "/_sim/reset", "/proxies/x/toxics", "/reset"} {
			if !gatewaysim.IsHarnessPath(p) {
				t.Errorf("IsHarnessPath(%q) = false", p)
			}
		}
	})
}
