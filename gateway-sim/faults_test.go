package gatewaysim_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

func orderFault(kind gatewaysim.FaultKind, order string) gatewaysim.Fault {
	return gatewaysim.Fault{Kind: kind, Match: gatewaysim.Match{OrderID: order}, Times: 1}
}

// eventTypes lists the types of the retained events about one order.
func (e *env) eventTypes(order string) []string {
	var out []string
	for _, ev := range e.sim.Events() {
		if ev.OrderID == order {
			out = append(out, ev.Type)
		}
	}
	return out
}

func wantTypes(t *testing.T, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}
}

func TestFaults_Decline(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(orderFault(gatewaysim.Decline, "ord_d"))
		r := e.charge("kd", "ord_d", 500)
		if typ, code, _ := r.stripeError(); r.status != 402 || typ != "card_error" || code != "card_declined" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if c := e.wantOneCharge("ord_d"); c.Status != gatewaysim.StatusFailed {
			t.Fatalf("ledger %+v", c)
		}
		again := e.charge("kd", "ord_d", 500) // Times: 1 is spent; the stored decline replays
		if again.status != 402 || string(again.body) != string(r.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s", again.status, again.body)
		}
		wantTypes(t, e.eventTypes("ord_d"), "fault", "decline", "replay")
	})
}

func TestFaults_FailBeforeChargeStoresNothing(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(orderFault(gatewaysim.FailBeforeCharge, "ord_f"))
		r := e.charge("kf", "ord_f", 500)
		if typ, _, _ := r.stripeError(); r.status != 500 || typ != "api_error" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if n := len(e.ledgerFor("ord_f")); n != 0 {
			t.Fatalf("%d ledger entries after an outage before charging", n)
		}
		again := e.charge("kf", "ord_f", 500) // processed afresh, not replayed
		if again.status != 200 || again.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("retry: %d %v %s", again.status, again.header, again.body)
		}
		e.wantOneCharge("ord_f")
		wantTypes(t, e.eventTypes("ord_f"), "fault", "charge")
	})
}

func TestFaults_ChargeThenFailReplaysTheCharge(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(orderFault(gatewaysim.ChargeThenFail, "ord_cf"))
		if r := e.charge("kcf", "ord_cf", 500); r.status != 500 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		c := e.wantOneCharge("ord_cf")
		again := e.charge("kcf", "ord_cf", 500)
		if again.status != 200 || again.chargeID() != c.ID || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry: %d %s", again.status, again.body)
		}
		wantTypes(t, e.eventTypes("ord_cf"), "charge", "fault", "replay")
	})
}

func TestFaults_ChargeThenDropClosesTheConnection(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(orderFault(gatewaysim.ChargeThenDrop, "ord_dr"))
		// A fresh connection: on a reused one Go's transport would itself
		// retry a request carrying Idempotency-Key and hide the drop.
		fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		_, err := e.do(fresh, http.MethodPost, "/v1/charges", apiKey, formType, chargeForm("ord_dr", 500), "Idempotency-Key", "kdr")
		if err == nil {
			t.Fatal("the dropped request got a response")
		}
		c := e.wantOneCharge("ord_dr")
		if again := e.charge("kdr", "ord_dr", 500); again.status != 200 || again.chargeID() != c.ID {
			t.Fatalf("retry: %d %s", again.status, again.body)
		}
		wantTypes(t, e.eventTypes("ord_dr"), "charge", "fault", "replay")
	})
}

// The crash window: the charge is in the ledger and replayable while its
// caller is still waiting; Release lets the caller hear about it.
func TestFaults_ChargeThenHangUntilReleased(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(orderFault(gatewaysim.ChargeThenHang, "ord_h"))
		held := make(chan reply, 1)
		go func() {
			r, _ := e.do(e.srv.Client(), http.MethodPost, "/v1/charges", apiKey, formType, chargeForm("ord_h", 500), "Idempotency-Key", "kh")
			held <- r
		}()
		hold := e.waitEvent(ofType(gatewaysim.EventHold))
		c := e.wantOneCharge("ord_h")
		if hold.ChargeID != c.ID || hold.HoldID == "" {
			t.Fatalf("hold event %+v, ledger %+v", hold, c)
		}
		if replay := e.charge("kh", "ord_h", 500); replay.status != 200 || replay.chargeID() != c.ID {
			t.Fatalf("replay during the hold: %d %s", replay.status, replay.body)
		}
		select {
		case r := <-held:
			t.Fatalf("the held caller got %d %s before the release", r.status, r.body)
		default:
		}
		if err := e.sim.Release(hold.HoldID); err != nil {
			t.Fatal(err)
		}
		if r := <-held; r.status != 200 || r.chargeID() != c.ID || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("released caller got %d %v %s", r.status, r.header, r.body)
		}
		if err := e.sim.Release(hold.HoldID); !errors.Is(err, gatewaysim.ErrUnknownHold) {
			t.Fatalf("second release: %v", err)
		}
		wantTypes(t, e.eventTypes("ord_h"), "charge", "fault", "hold", "replay", "release")
	})
}

// A caller killed inside the window leaves its hold for the harness to
// release without a race.
func TestFaults_HoldOutlivesItsCaller(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(orderFault(gatewaysim.ChargeThenHang, "ord_gone"))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/v1/charges", stringsReader(chargeForm("ord_gone", 500)))
			req.Header.Set("Authorization", "Bearer "+apiKey)
			req.Header.Set("Content-Type", formType)
			_, err := e.srv.Client().Do(req)
			done <- err
		}()
		hold := e.waitEvent(ofType(gatewaysim.EventHold))
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the cancelled caller got a response")
		}
		if hs := e.sim.Holds(); len(hs) != 1 || hs[0].ID != hold.HoldID {
			t.Fatalf("holds = %+v", hs)
		}
		if err := e.sim.Release(hold.HoldID); err != nil {
			t.Fatal(err)
		}
		e.wantOneCharge("ord_gone")
	})
}

func TestFaults_LatencyDelaysTheDecision(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		const d = 150 * time.Millisecond
		e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Latency, Match: gatewaysim.Match{OrderID: "ord_l"}, Latency: d})
		start := time.Now()
		if r := e.charge("kl", "ord_l", 500); r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if took := time.Since(start); took < d {
			t.Fatalf("took %v, want at least %v", took, d)
		}
		wantTypes(t, e.eventTypes("ord_l"), "fault", "charge")
	})
}

func TestFaults_MatchNth(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.FailBeforeCharge, Match: gatewaysim.Match{Nth: 2}})
		got := []int{e.charge("", "o1", 1).status, e.charge("", "o2", 1).status, e.charge("", "o3", 1).status}
		if got[0] != 200 || got[1] != 500 || got[2] != 200 {
			t.Fatalf("statuses %v, want [200 500 200]", got)
		}
		e.sim.Reset() // the count restarts
		e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.FailBeforeCharge, Match: gatewaysim.Match{Nth: 1}})
		if r := e.charge("", "o4", 1); r.status != 500 {
			t.Fatalf("first request after reset: %d", r.status)
		}
	})
}

// firings runs n requests against a fresh simulator with a 50% decline
// fault and returns which of them were declined.
func firings(t *testing.T, seed int64, n int) []bool {
	var out []bool
	withSim(t, gatewaysim.Config{Seed: seed}, func(e *env) {
		e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Decline, Match: gatewaysim.Match{Probability: 0.5}})
		for i := range n {
			out = append(out, e.charge("", "ord_p"+itoa(i), 100).status == 402)
		}
	})
	return out
}

func TestFaults_ProbabilityIsSeeded(t *testing.T) {
	a, b, c := firings(t, 7, 200), firings(t, 7, 200), firings(t, 8, 200)
	fired, sameAsOtherSeed := 0, 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d: same seed, different draw", i)
		}
		if a[i] {
			fired++
		}
		if a[i] == c[i] {
			sameAsOtherSeed++
		}
	}
	if fired < 60 || fired > 140 {
		t.Fatalf("fired %d of 200 at p=0.5", fired)
	}
	if sameAsOtherSeed == len(a) {
		t.Fatal("seeds 7 and 8 drew identically")
	}
}

func TestFaults_TimesBoundsFirings(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		id := e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Decline, Times: 2})
		var statuses []int
		for i := range 4 {
			statuses = append(statuses, e.charge("", "ord_t"+itoa(i), 100).status)
		}
		if statuses[0] != 402 || statuses[1] != 402 || statuses[2] != 200 || statuses[3] != 200 {
			t.Fatalf("statuses %v", statuses)
		}
		if fs := e.sim.Faults(); len(fs) != 1 || fs[0].ID != id || fs[0].Fired != 2 {
			t.Fatalf("faults %+v", fs)
		}
		e.sim.RemoveFault(id)
		e.sim.RemoveFault(id) // a no-op
		if fs := e.sim.Faults(); len(fs) != 0 {
			t.Fatalf("faults after remove %+v", fs)
		}
	})
}

func TestFaults_ResetReleasesHolds(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(orderFault(gatewaysim.ChargeThenHang, "ord_r"))
		held := make(chan reply, 1)
		go func() {
			r, _ := e.do(e.srv.Client(), http.MethodPost, "/v1/charges", apiKey, formType, chargeForm("ord_r", 500))
			held <- r
		}()
		e.waitEvent(ofType(gatewaysim.EventHold))
		e.sim.Reset()
		if r := <-held; r.status != 200 {
			t.Fatalf("released by reset: %d %s", r.status, r.body)
		}
		if l := e.sim.Ledger(); len(l) != 0 {
			t.Fatalf("ledger after reset: %+v", l)
		}
	})
}

// intent posts a form-encoded PaymentIntent create for order, confirmed at
// once when confirm is true, with the idempotency key ("" for none).
func (e *env) intent(key, order string, confirm bool) reply {
	e.t.Helper()
	v := url.Values{"amount": {"500"}, "currency": {"usd"}, "payment_method": {"pm_card_visa"}, "metadata[order_id]": {order}}
	if confirm {
		v.Set("confirm", "true")
	}
	return e.request(http.MethodPost, "/v1/payment_intents", apiKey, formType, v.Encode(), idemHeader(key)...)
}

// confirmPath is the confirm URL of PaymentIntent id.
func confirmPath(id string) string { return "/v1/payment_intents/" + id + "/confirm" }

// latestCharge is the latest_charge of a PaymentIntent reply.
func (r reply) latestCharge() string {
	var b struct {
		LatestCharge string `json:"latest_charge"`
	}
	_ = json.Unmarshal(r.body, &b)
	return b.LatestCharge
}

// createdIntent creates an unconfirmed PaymentIntent for order while
// faults for that order are installed: a create moves no money, so no
// fault fires on it.
func (e *env) createdIntent(order string) string {
	e.t.Helper()
	r := e.intent("create-"+order, order, false)
	if r.status != 200 || len(e.sim.Events()) != 0 {
		e.t.Fatalf("create: %d %s; events %+v", r.status, r.body, e.sim.Events())
	}
	return r.chargeID()
}

func TestFaults_PaymentIntentConfirmFailBeforeCharge(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(orderFault(gatewaysim.FailBeforeCharge, "ord_pf"))
		id := e.createdIntent("ord_pf")
		r := e.request(http.MethodPost, confirmPath(id), apiKey, formType, "", "Idempotency-Key", "kpf")
		if typ, _, _ := r.stripeError(); r.status != 500 || typ != "api_error" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if n := len(e.ledgerFor("ord_pf")); n != 0 {
			t.Fatalf("%d ledger entries after an outage before charging", n)
		}
		again := e.request(http.MethodPost, confirmPath(id), apiKey, formType, "", "Idempotency-Key", "kpf")
		c := e.wantOneCharge("ord_pf") // processed afresh, not replayed
		if again.status != 200 || again.header.Get("Idempotent-Replayed") != "" || again.latestCharge() != c.ID || c.PaymentIntent != id {
			t.Fatalf("retry: %d %v %s; ledger %+v", again.status, again.header, again.body, c)
		}
		wantTypes(t, e.eventTypes("ord_pf"), "fault", "charge")
	})
}

func TestFaults_PaymentIntentConfirmChargeThenDrop(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(orderFault(gatewaysim.ChargeThenDrop, "ord_pd"))
		id := e.createdIntent("ord_pd")
		fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		if _, err := e.do(fresh, http.MethodPost, confirmPath(id), apiKey, formType, "", "Idempotency-Key", "kpd"); err == nil {
			t.Fatal("the dropped confirm got a response")
		}
		c := e.wantOneCharge("ord_pd")
		again := e.request(http.MethodPost, confirmPath(id), apiKey, formType, "", "Idempotency-Key", "kpd")
		if again.status != 200 || again.chargeID() != id || again.latestCharge() != c.ID || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry: %d %s; ledger %+v", again.status, again.body, c)
		}
		// Another key finds the PaymentIntent paid: one PaymentIntent moves
		// money once.
		if r := e.request(http.MethodPost, confirmPath(id), apiKey, formType, "", "Idempotency-Key", "kpd-2"); r.status != 400 {
			t.Fatalf("confirm under another key: %d %s", r.status, r.body)
		}
		e.wantOneCharge("ord_pd")
		wantTypes(t, e.eventTypes("ord_pd"), "charge", "fault", "replay")
	})
}

// Every outcome fault applies to a create with confirm=true as to a
// charge: the answer a service sees, and the one ledger entry.
func TestFaults_PaymentIntentConfirmOnCreate(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		for _, tc := range []struct {
			kind           gatewaysim.FaultKind
			status, replay int
			events         []string
		}{
			{gatewaysim.Decline, 402, 402, []string{"fault", "decline", "replay"}},
			{gatewaysim.ChargeThenFail, 500, 200, []string{"charge", "fault", "replay"}},
		} {
			order := "ord_" + string(tc.kind)
			e.sim.AddFault(orderFault(tc.kind, order))
			if r := e.intent("k-"+order, order, true); r.status != tc.status {
				t.Fatalf("%s: %d %s", tc.kind, r.status, r.body)
			}
			c := e.wantOneCharge(order)
			again := e.intent("k-"+order, order, true)
			if again.status != tc.replay || c.PaymentIntent == "" || again.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("%s: retry %d %s; ledger %+v", tc.kind, again.status, again.body, c)
			}
			wantTypes(t, e.eventTypes(order), tc.events...)
		}
	})
}

// The crash window on a PaymentIntent: the charge is made and the
// PaymentIntent paid while its caller waits; a retry meanwhile replays it.
func TestFaults_PaymentIntentChargeThenHang(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(orderFault(gatewaysim.ChargeThenHang, "ord_ph"))
		held := make(chan reply, 1)
		go func() {
			v := url.Values{"amount": {"500"}, "currency": {"usd"}, "payment_method": {"pm_card_visa"}, "confirm": {"true"}, "metadata[order_id]": {"ord_ph"}}
			r, _ := e.do(e.srv.Client(), http.MethodPost, "/v1/payment_intents", apiKey, formType, v.Encode(), "Idempotency-Key", "kph")
			held <- r
		}()
		hold := e.waitEvent(ofType(gatewaysim.EventHold))
		c := e.wantOneCharge("ord_ph")
		replay := e.intent("kph", "ord_ph", true)
		if hold.ChargeID != c.ID || replay.status != 200 || replay.latestCharge() != c.ID || replay.chargeID() != c.PaymentIntent {
			t.Fatalf("hold %+v, replay %d %s, ledger %+v", hold, replay.status, replay.body, c)
		}
		if err := e.sim.Release(hold.HoldID); err != nil {
			t.Fatal(err)
		}
		if r := <-held; r.status != 200 || r.chargeID() != c.PaymentIntent {
			t.Fatalf("released caller got %d %s", r.status, r.body)
		}
	})
}

// While a confirm waits out a latency fault, a confirm of the same
// PaymentIntent under another key gets Stripe's 429 lock_timeout, and the
// PaymentIntent charges once.
func TestFaults_PaymentIntentLockedWhileConfirming(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Latency, Match: gatewaysim.Match{OrderID: "ord_pl"}, Latency: 300 * time.Millisecond, Times: 1})
		id := e.createdIntent("ord_pl")
		first := make(chan reply, 1)
		go func() {
			r, _ := e.do(e.srv.Client(), http.MethodPost, confirmPath(id), apiKey, formType, "", "Idempotency-Key", "kpl-1")
			first <- r
		}()
		e.waitEvent(func(ev gatewaysim.Event) bool {
			return ev.Type == gatewaysim.EventFault && ev.Fault == gatewaysim.Latency
		})
		r := e.request(http.MethodPost, confirmPath(id), apiKey, formType, "", "Idempotency-Key", "kpl-2")
		if _, code, _ := r.stripeError(); r.status != 429 || code != "lock_timeout" {
			t.Fatalf("concurrent confirm: %d %s", r.status, r.body)
		}
		if r := <-first; r.status != 200 {
			t.Fatalf("first confirm: %d %s", r.status, r.body)
		}
		e.wantOneCharge("ord_pl")
	})
}
