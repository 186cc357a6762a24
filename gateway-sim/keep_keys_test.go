package gatewaysim_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// A provider forgets a key on its own clock, per key: an answered key at
// the lifetime from its first request; a key whose orders a KeepKeys
// holds (a payment a crash struck, in recovery) not before that ends,
// also one the lifetime had forgotten within KeepHorizon; every other
// key at the lifetime, whatever is kept beside it.
func TestKeepKeys_EachKeyOnItsOwnClock(t *testing.T) {
	const ttl = time.Second
	clock := gatewaysim.NewManualClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	withSim(t, gatewaysim.Config{IdempotencyTTL: ttl, Now: clock.Now}, func(e *env) {
		struck := e.charge("k-struck", "ord_ex1_a", 100).chargeID()
		answered := e.charge("k-answered", "ord_ex2_a", 100).chargeID()
		late := e.charge("k-late", "ord_ex3_a", 100).chargeID()
		if err := e.sim.KeepKeys(gatewaysim.KeepKeys{Prefix: "ord_ex1_"}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(2 * ttl)
		if got := e.charge("k-struck", "ord_ex1_a", 100).chargeID(); got != struck {
			t.Errorf("a kept key past the lifetime: charge %s, want the replay of %s", got, struck)
		}
		if got := e.charge("k-answered", "ord_ex2_a", 100).chargeID(); got == answered {
			t.Errorf("an answered key past the lifetime was replayed (%s), want a new payment", got)
		}
		// Forgotten 1s ago and asked for by no one since: a keep revives it.
		if err := e.sim.KeepKeys(gatewaysim.KeepKeys{Prefix: "ord_ex3_", ForMillis: 500}); err != nil {
			t.Fatal(err)
		}
		if got := e.charge("k-late", "ord_ex3_a", 100).chargeID(); got != late {
			t.Errorf("a key kept within the horizon: charge %s, want the replay of %s", got, late)
		}
		// The keep ends: from then on the lifetime rules.
		if err := e.sim.KeepKeys(gatewaysim.KeepKeys{Prefix: "ord_ex1_", ForMillis: 1000}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(999 * time.Millisecond)
		if got := e.charge("k-struck", "ord_ex1_a", 100).chargeID(); got != struck {
			t.Errorf("inside the keep's end: charge %s, want the replay of %s", got, struck)
		}
		clock.Advance(time.Millisecond)
		if got := e.charge("k-struck", "ord_ex1_a", 100).chargeID(); got == struck {
			t.Errorf("past the keep's end the key was replayed (%s), want a new payment", got)
		}
		if n := len(e.ledgerFor("ord_ex1_a")); n != 2 {
			t.Errorf("%d charges of the struck order, want 2", n)
		}
	})
}

// A record past KeepHorizon is gone: a keep that comes later revives
// nothing.
func TestKeepKeys_NotPastTheHorizon(t *testing.T) {
	clock := gatewaysim.NewManualClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	withSim(t, gatewaysim.Config{IdempotencyTTL: time.Second, Now: clock.Now}, func(e *env) {
		first := e.charge("k-old", "ord_ex5_a", 100).chargeID()
		clock.Advance(gatewaysim.KeepHorizon)
		e.charge("k-other", "ord_ex6_a", 100) // any request sweeps
		if err := e.sim.KeepKeys(gatewaysim.KeepKeys{Prefix: "ord_ex5_"}); err != nil {
			t.Fatal(err)
		}
		if got := e.charge("k-old", "ord_ex5_a", 100).chargeID(); got == first {
			t.Errorf("a key past the horizon was revived (%s)", got)
		}
	})
}

// A key in flight is never forgotten: its request has not been answered
// (a duplicate gets 409). Once answered past its lifetime, it is.
func TestKeepKeys_InFlightIsNotForgotten(t *testing.T) {
	clock := gatewaysim.NewManualClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	withSim(t, gatewaysim.Config{IdempotencyTTL: time.Second, Now: clock.Now}, func(e *env) {
		e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Latency, Latency: 300 * time.Millisecond, Match: gatewaysim.Match{OrderID: "ord_fl"}, Times: 1})
		done := make(chan reply, 1)
		go func() { done <- e.charge("k-fl", "ord_fl", 100) }()
		e.waitEvent(ofType(gatewaysim.EventFault)) // the request waits out its latency, in flight
		clock.Advance(2 * time.Second)
		if r := e.charge("k-fl", "ord_fl", 100); r.status != http.StatusConflict {
			t.Errorf("a duplicate of a request in flight past the lifetime: %d %s, want 409", r.status, r.body)
		}
		first := (<-done).chargeID()
		if got := e.charge("k-fl", "ord_fl", 100).chargeID(); got == first {
			t.Errorf("answered past its lifetime, the key was replayed (%s), want a new payment", got)
		}
	})
}

// A KeepKeys names orders and keeps them for no negative time.
func TestKeepKeys_RefusesBadInput(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		for _, k := range []gatewaysim.KeepKeys{{}, {Prefix: "ord_x_", ForMillis: -1}} {
			if err := e.sim.KeepKeys(k); !errors.Is(err, gatewaysim.ErrInvalidKeepKeys) {
				t.Errorf("%+v: %v, want ErrInvalidKeepKeys", k, err)
			}
		}
	})
}

// Over the control API: a KeepKeys through Client reaches the simulator,
// and a body that names no orders, or a field it does not have, is 400
// invalid_keep_keys saying what was expected.
func TestKeepKeys_OverTheControlAPI(t *testing.T) {
	clock := gatewaysim.NewManualClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	withSim(t, gatewaysim.Config{IdempotencyTTL: time.Second, Now: clock.Now}, func(e *env) {
		first := e.charge("k-api", "ord_ex7_a", 100).chargeID()
		if err := gatewaysim.NewClient(e.ctl.URL).KeepKeys(t.Context(), gatewaysim.KeepKeys{Prefix: "ord_ex7_"}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(2 * time.Second)
		if got := e.charge("k-api", "ord_ex7_a", 100).chargeID(); got != first {
			t.Errorf("kept over the control API: charge %s, want the replay of %s", got, first)
		}
		for _, bad := range []string{`{}`, `{"prefix":"ord_x_","for_ms":-1}`, `{"prefix":"ord_x_","for":"1s"}`} {
			r := e.control(http.MethodPost, "/_sim/keep-keys", jsonType, bad)
			if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "invalid_keep_keys") {
				t.Errorf("%s: %d %s, want 400 invalid_keep_keys", bad, r.status, r.body)
			}
		}
	})
}
