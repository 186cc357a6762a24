package history_test

import (
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/history"
)

// TestPolicy_GatewayKeyTTL pins the gateway's key lifetime: the whole
// promise and its band without production numbers or when the provider
// outlives the production promise; otherwise the provider's share of
// the test-mode promise, clamped between the recovery floor and that
// ceiling.
func TestPolicy_GatewayKeyTTL(t *testing.T) {
	const day = 24 * time.Hour
	test := history.Policy{TTL: time.Second, RetryWindow: 20 * time.Second, RecoveryWindow: 2 * time.Second, MaxWait: time.Second}
	prod := func(ttl, window, life time.Duration) history.Policy {
		p := test
		p.Production = history.Production{TTL: ttl, RetryWindow: window, ProviderKeyLifetime: life}
		return p
	}
	pg := []string{"postgres"}
	for _, c := range []struct {
		name   string
		p      history.Policy
		stores []string
		want   time.Duration
	}{
		{"nothing declared: the promise and its band", test, pg, 20*time.Second + 250*time.Millisecond},
		{"the provider outlives the production promise", prod(12*time.Hour, 0, day), pg, 20*time.Second + 250*time.Millisecond},
		{"the provider lives exactly the promise", prod(day, 0, day), pg, 20*time.Second + 250*time.Millisecond},
		// 20s/30 = 0.67s, under the floor: recovery window 2s + band
		// 0.25s + twice the longest PostgreSQL wave (4s).
		{"30 days against Stripe's day: the recovery floor", prod(30*day, 0, day), pg, 10*time.Second + 250*time.Millisecond},
		// Without a store the longest wave is 2.7s.
		{"30 days, keys in memory", prod(30*day, 0, day), nil, 7*time.Second + 650*time.Millisecond},
		{"half the promise, above the floor", prod(2*day, 0, day), nil, 10 * time.Second},
		{"the production retry window counts", prod(time.Hour, 4*day, day), nil, 7*time.Second + 650*time.Millisecond},
		{"the promise is short: the ceiling wins over the floor",
			history.Policy{TTL: time.Second, RetryWindow: time.Second, RecoveryWindow: 2 * time.Second, Production: history.Production{TTL: 30 * day, ProviderKeyLifetime: day}},
			pg, time.Second + 250*time.Millisecond},
	} {
		if got := c.p.GatewayKeyTTL(c.stores); got != c.want {
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
