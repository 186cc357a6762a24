package scenarios

import (
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/target"
)

// GatewayConfig is the gateway simulator's configuration for tg (issue
// 11, item 5). Its key TTL is compressed with the target's test-mode
// policy (target.Policy.GatewayKeyTTL) instead of Stripe's fixed 24h,
// which would absorb every late retry that a server forwards as its own
// key. Its idempotency is off: a server that passes the client's key to
// the gateway instead of holding a lock of its own charges twice, and the
// ledger shows it. The runner switches it on for each order of a family
// whose correct servers re-send their own request after a crash
// (Family.GatewayReplays), as Stripe lets them. The caller sets Seed and
// Logger; everything else is here.
func GatewayConfig(tg *target.Target) gatewaysim.Config {
	return gatewaysim.Config{IdempotencyTTL: tg.Policy.GatewayKeyTTL(), NoIdempotency: true}
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
