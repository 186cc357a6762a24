package target_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/crashwave"
	"github.com/idemcheck/idemcheck/target"
)

func TestPolicy_PromiseAndBand(t *testing.T) {
	cases := []struct {
		pol           target.Policy
		promise, band time.Duration
	}{
		{target.Policy{TTL: time.Second, RetryWindow: 10 * time.Second}, 10 * time.Second, 250 * time.Millisecond},
		{target.Policy{TTL: 24 * time.Hour, RetryWindow: time.Hour}, 24 * time.Hour, 144 * time.Minute},
	}
	for _, c := range cases {
		if got := c.pol.Promise(); got != c.promise {
			t.Errorf("%+v: promise %s, want %s", c.pol, got, c.promise)
		}
		if got := c.pol.Band(); got != c.band {
			t.Errorf("%+v: band %s, want %s", c.pol, got, c.band)
		}
		if got := c.pol.GatewayKeyTTL(); got != c.promise+c.band {
			t.Errorf("%+v: gateway key TTL %s", c.pol, got)
		}
	}
}

// A built-in has no file: the refusal names it instead.
func TestRefuse_BuiltIn(t *testing.T) {
	tg := &target.Target{Name: "x", Start: target.Start{Command: "./s"}, Policy: target.Policy{TTL: time.Second}}
	if err := tg.Validate(); err != nil {
		t.Fatal(err)
	}
	err := tg.Refuse(tg.CrashWindowFits())
	if err == nil || !errors.Is(err, target.ErrInvalid) || !strings.HasPrefix(err.Error(), "built-in target x: policy.recovery_window:") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "shorten") {
		t.Errorf("suggests shortening the recovery window below zero: %v", err)
	}
	tg.Policy.RetryWindow = time.Minute
	if err := tg.CrashWindowFits(); err != nil {
		t.Errorf("a minute's promise fits a 30s recovery window: %v", err)
	}
}

// A crash wave is played when the cheapest point's one strike, the band
// and the wave's margin fit inside the promise, the recovery window or
// not: exactly fitting is enough, a millisecond short is refused.
func TestCrashWindowFits_CheapestStrikeInsideThePromise(t *testing.T) {
	pol := target.Policy{TTL: time.Second, RecoveryWindow: 5 * time.Second}
	pol.RetryWindow = 100*time.Millisecond + pol.Band() + crashwave.Margin
	tg := &target.Target{Name: "x", Policy: pol}
	if err := tg.CrashWindowFits(); err != nil {
		t.Errorf("exactly fitting: %v", err)
	}
	if note := tg.CrashPointsLeftOut(); !strings.Contains(note, "M6 judges only the payments whose retry got a definitive answer") {
		t.Errorf("a recovery window longer than the promise, not said: %q", note)
	}
	tg.Policy.RetryWindow -= time.Millisecond
	if err := tg.CrashWindowFits(); err == nil {
		t.Error("a millisecond short fits")
	}
}

// A policy with room for some crash points only is played, and the
// points it leaves out are named with the policy values that strike
// them; with room for the longest strike, none is named.
func TestCrashPointsLeftOut_NamesThePointsAndWhatStrikesThem(t *testing.T) {
	pol := target.Policy{TTL: 20 * time.Second, RetryWindow: 20 * time.Second, RecoveryWindow: 16500 * time.Millisecond}
	tg := &target.Target{Name: "x", Needs: []string{"postgres"}, Policy: pol}
	if err := tg.CrashWindowFits(); err != nil {
		t.Fatalf("room for the gateway points: %v", err)
	}
	note := tg.CrashPointsLeftOut()
	for _, want := range []string{"not struck: restart-postgres (a 1s strike):", "leaves a wave 500ms for its strikes", "policy.retry_window 20.5s strikes them, or policy.recovery_window 16s"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q: %s", want, note)
		}
	}
	if strings.Contains(note, "kill-in-hang") || strings.Contains(note, "pause-in-hang") {
		t.Errorf("names a point that fits: %s", note)
	}
	tg.Policy.RecoveryWindow = 15 * time.Second
	if note := tg.CrashPointsLeftOut(); note != "" {
		t.Errorf("2s of room fits every 1s strike: %s", note)
	}
}
