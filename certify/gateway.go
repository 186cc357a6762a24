package certify

import (
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/target"
)

// GatewayConfig is the gateway simulator's configuration for tg. The
// gateway speaks the provider profile the target names (gateway.provider,
// default stripe) and remembers an answered key for a key TTL compressed
// like the target's own (history.Policy.GatewayKeyTTL: the provider's
// share of the test-mode promise, when the target declares a production
// promise that outlives its provider's key lifetime; else the whole
// promise), so that a server that lets the gateway's idempotency stand in
// for its own store is seen double-charging a late retry it promised to
// cover. A correct server may re-send its own request to learn what the
// gateway decided (docs/protocol.md), which needs a gateway that replays:
// the runner has the gateway keep the keys of every example in recovery
// until it is over (gatewaysim.KeepKeys). off models a
// provider without idempotency (--gateway-idempotency off), as the
// profile none does: the gateway ignores the key. The caller sets Seed
// and Logger; everything else is here.
func GatewayConfig(tg *target.Target, off bool) gatewaysim.Config {
	provider := tg.Gateway.Provider
	if provider == gatewaysim.ProviderStripe {
		provider = ""
	}
	return gatewaysim.Config{IdempotencyTTL: tg.Policy.GatewayKeyTTL(), Provider: provider,
		NoIdempotency: off || provider == gatewaysim.ProviderNone}
}

// GatewayRecord is what every history of a run records of the gateway's
// configuration: the provider profile (none recorded for stripe, as in
// every history before profiles) and which results its keys keep, and
// how long it kept answered keys (those of examples in recovery kept
// until it was over), or that it kept none.
func GatewayRecord(cfg gatewaysim.Config) history.Gateway {
	if cfg.NoIdempotency {
		return history.Gateway{NoIdempotency: true, Provider: cfg.Provider}
	}
	p, _ := gatewaysim.ProfileNamed(cfg.Provider)
	return history.Gateway{KeyTTL: cfg.IdempotencyTTL, KeepsStruck: true, Provider: cfg.Provider, KeepsOnlySuccess: p.Idempotency.KeepsOnlySuccess}
}

// gatewayIdempotent says whether the run's gateway keeps keys at all: not
// with --gateway-idempotency off nor under the profile none.
func gatewayIdempotent(tg *target.Target, off bool) bool {
	return !GatewayConfig(tg, off).NoIdempotency
}
