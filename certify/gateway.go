package certify

import (
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/target"
)

// GatewayConfig is the gateway simulator's configuration for tg.
// The gateway remembers keys as Stripe does, for a key TTL
// compressed like the target's own (target.Policy.GatewayKeyTTL: the TTL a
// target declares in test mode stands for Stripe's 24h), so that a server
// that lets the gateway's idempotency stand in for its own store is seen
// double-charging a late retry inside its promise; the server learns the
// gateway's key TTL from GATEWAY_KEY_TTL ({{.GatewayKeyTTL}}). A correct
// server may re-send its own request to learn what the gateway decided
// (docs/protocol.md), which needs a gateway that replays. The caller sets
// Seed and Logger; everything else is here.
func GatewayConfig(tg *target.Target) gatewaysim.Config {
	return gatewaysim.Config{IdempotencyTTL: tg.Policy.GatewayKeyTTL(tg.StoreNames())}
}
