package certify_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/target"
)

func gatewayTarget(prod target.Production) *target.Target {
	return &target.Target{Name: "t", Needs: []string{"postgres"},
		Policy: target.Policy{TTL: time.Second, RetryWindow: 30 * time.Second, RecoveryWindow: 2 * time.Second, MaxWait: 2 * time.Second, Production: prod}}
}

// The gateway replays as Stripe does, and remembers keys
// for the target's promise, not 24h.
func TestGatewayConfig_KeyTTLScaledWithThePolicy(t *testing.T) {
	cfg := certify.GatewayConfig(gatewayTarget(target.Production{}), false)
	if cfg.NoIdempotency {
		t.Error("the gateway must replay a correct server's re-sent request, as Stripe does")
	}
	if want := 30*time.Second + 250*time.Millisecond; cfg.IdempotencyTTL != want {
		t.Errorf("gateway key TTL %s, want the promise plus its band, %s", cfg.IdempotencyTTL, want)
	}
	if got := strings.Join(cfg.Args(), " "); got != "--ttl=30.25s" {
		t.Errorf("gateway-sim args %q", got)
	}
	if rec := certify.GatewayRecord(cfg); rec != (history.Gateway{KeyTTL: cfg.IdempotencyTTL, KeepsStruck: true}) {
		t.Errorf("recorded %+v", rec)
	}
}

// A production promise of 30 days against Stripe's 24h: the gateway
// forgets an answered key at the provider's share of the promise, 30s/30,
// with no floor for recovery (the runner keeps struck keys).
func TestGatewayConfig_ProductionPromiseOutlivesTheProvider(t *testing.T) {
	cfg := certify.GatewayConfig(gatewayTarget(target.Production{TTL: 30 * 24 * time.Hour, ProviderKeyLifetime: 24 * time.Hour}), false)
	if want := time.Second; cfg.IdempotencyTTL != want {
		t.Errorf("gateway key TTL %s, want the provider's share %s", cfg.IdempotencyTTL, want)
	}
}

// --gateway-idempotency off: the gateway ignores keys, and every history
// says so.
func TestGatewayConfig_Off(t *testing.T) {
	cfg := certify.GatewayConfig(gatewayTarget(target.Production{}), true)
	if !cfg.NoIdempotency || !strings.Contains(strings.Join(cfg.Args(), " "), "--no-idempotency") {
		t.Errorf("off: %+v, args %q", cfg, cfg.Args())
	}
	if rec := certify.GatewayRecord(cfg); rec != (history.Gateway{NoIdempotency: true}) {
		t.Errorf("recorded %+v", rec)
	}
}

// The target's provider reaches the simulator (in process and as the
// --provider flag of a container) and every history; stripe is recorded
// as nothing, as before profiles.
func TestGatewayConfig_Provider(t *testing.T) {
	tg := gatewayTarget(target.Production{})
	tg.Gateway = target.Gateway{Provider: "checkout", API: "payments"}
	cfg := certify.GatewayConfig(tg, false)
	if cfg.Provider != "checkout" || cfg.NoIdempotency || !strings.Contains(strings.Join(cfg.Args(), " "), "--provider=checkout") {
		t.Errorf("checkout: %+v, args %q", cfg, cfg.Args())
	}
	if rec := certify.GatewayRecord(cfg); rec.Provider != "checkout" || rec.KeyTTL != cfg.IdempotencyTTL || !rec.KeepsOnlySuccess {
		t.Errorf("recorded %+v", rec)
	}
	tg.Gateway = target.Gateway{Provider: "stripe", API: "charges"}
	if cfg := certify.GatewayConfig(tg, false); cfg.Provider != "" || len(cfg.Args()) != 1 {
		t.Errorf("stripe: %+v, args %q", cfg, cfg.Args())
	}
	tg.Gateway = target.Gateway{Provider: "none", API: "charges"}
	cfg = certify.GatewayConfig(tg, false)
	if !cfg.NoIdempotency {
		t.Errorf("none keeps keys: %+v", cfg)
	}
	if rec := certify.GatewayRecord(cfg); rec != (history.Gateway{NoIdempotency: true, Provider: "none"}) {
		t.Errorf("recorded %+v", rec)
	}
}
