package certify_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/target"
)

// The gateway replays as Stripe does, and remembers keys
// for the target's promise, not 24h.
func TestGatewayConfig_KeyTTLScaledWithThePolicy(t *testing.T) {
	tg := &target.Target{Name: "t", Policy: target.Policy{TTL: time.Second, RetryWindow: 30 * time.Second, RecoveryWindow: 2 * time.Second, MaxWait: 2 * time.Second}}
	cfg := certify.GatewayConfig(tg)
	if cfg.NoIdempotency {
		t.Error("the gateway must replay a correct server's re-sent request, as Stripe does")
	}
	if want := 30*time.Second + 250*time.Millisecond; cfg.IdempotencyTTL != want {
		t.Errorf("gateway key TTL %s, want the promise plus its band, %s", cfg.IdempotencyTTL, want)
	}
	if got := strings.Join(cfg.Args(), " "); got != "--ttl=30.25s" {
		t.Errorf("gateway-sim args %q", got)
	}
}
