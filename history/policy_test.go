package history_test

import (
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/history"
)

// TestPolicy_GatewayKeyTTL pins the gateway's lifetime of an answered
// key: the whole promise and its band without production numbers or when
// the provider outlives the production promise; otherwise the provider's
// share of the test-mode promise, at most that ceiling and at least 1ms,
// with no floor for crash recovery (the keys a crash struck are kept on
// their own clock, gatewaysim.KeepKeys).
func TestPolicy_GatewayKeyTTL(t *testing.T) {
	const day = 24 * time.Hour
	test := history.Policy{TTL: time.Second, RetryWindow: 20 * time.Second, RecoveryWindow: 2 * time.Second, MaxWait: time.Second}
	prod := func(ttl, window, life time.Duration) history.Policy {
		p := test
		p.Production = history.Production{TTL: ttl, RetryWindow: window, ProviderKeyLifetime: life}
		return p
	}
	for _, c := range []struct {
		name string
		p    history.Policy
		want time.Duration
	}{
		{"nothing declared: the promise and its band", test, 20*time.Second + 250*time.Millisecond},
		{"the provider outlives the production promise", prod(12*time.Hour, 0, day), 20*time.Second + 250*time.Millisecond},
		{"the provider lives exactly the promise", prod(day, 0, day), 20*time.Second + 250*time.Millisecond},
		// 20s × 24h / 30 days, whatever the recovery window and stores.
		{"30 days against Stripe's day: the provider's share", prod(30*day, 0, day), 667 * time.Millisecond},
		{"half the promise", prod(2*day, 0, day), 10 * time.Second},
		{"the production retry window counts", prod(time.Hour, 4*day, day), 5 * time.Second},
		{"a century against a day: never under 1ms", prod(36500*day, 0, day), time.Millisecond},
		{"the promise is short: a share of it",
			history.Policy{TTL: time.Second, RetryWindow: time.Second, RecoveryWindow: 2 * time.Second, Production: history.Production{TTL: 30 * day, ProviderKeyLifetime: day}},
			33 * time.Millisecond},
	} {
		if got := c.p.GatewayKeyTTL(); got != c.want {
			t.Errorf("%s: GatewayKeyTTL = %s, want %s", c.name, got, c.want)
		}
	}
}

// TestProduction_ProviderShare: the share is 1 unless the production
// promise outlives the provider.
func TestProduction_ProviderShare(t *testing.T) {
	p := history.Production{TTL: 30 * 24 * time.Hour, ProviderKeyLifetime: 24 * time.Hour}
	if got := p.ProviderShare(); got < 0.0333 || got > 0.0334 {
		t.Errorf("30 days against 24h: share %v, want 1/30", got)
	}
	if got := (history.Production{}).ProviderShare(); got != 1 {
		t.Errorf("nothing declared: share %v, want 1", got)
	}
}
