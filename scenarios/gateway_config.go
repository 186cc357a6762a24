package scenarios

import (
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/target"
)

// GatewayConfig is the gateway simulator's configuration for tg (issue
// 11, item 5). The gateway remembers keys as Stripe does, for a key TTL
// compressed like the target's own (target.Policy.GatewayKeyTTL: the TTL a
// target declares in test mode stands for Stripe's 24h), so that a server
// that lets the gateway's idempotency stand in for its own store is seen
// double-charging a late retry inside its promise; the server learns the
// gateway's key TTL from GATEWAY_KEY_TTL ({{.GatewayKeyTTL}}). A correct
// server may re-send its own request to learn what the gateway decided
// (docs/protocol.md), which needs a gateway that replays. The caller sets
// Seed and Logger; everything else is here.
func GatewayConfig(tg *target.Target) gatewaysim.Config {
	return gatewaysim.Config{IdempotencyTTL: tg.Policy.GatewayKeyTTL()}
}

// CheckFamilies refuses a target that one of the named families cannot
// probe meaningfully (Family.Fits), located in the target's file
// (file:line: field: what to change) and wrapping target.ErrInvalid, so
// the CLI exits 2 before anything starts. Only the chosen families are
// asked: a target whose recovery window outlasts its promise can still be
// certified for everything but crash-window (and mixed leaves crash-window
// out for it).
func CheckFamilies(tg *target.Target, families []string) error {
	for _, name := range families {
		f, err := FamilyByName(name)
		if err != nil || f.Fits == nil {
			continue // unknown names are refused where they are parsed
		}
		if err := f.Fits(tg); err != nil {
			return tg.Refuse(err)
		}
	}
	return nil
}
