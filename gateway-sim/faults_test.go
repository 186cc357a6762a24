package gatewaysim_test

import (
	"context"
	"errors"
	"net/http"
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
