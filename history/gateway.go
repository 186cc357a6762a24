package history

import "time"

// Gateway is how the gateway simulator kept its own idempotency keys
// while a history was recorded: what a server that leans on the
// provider's deduplication was given. The checker reads it to say why
// a key the server re-sent was charged again, and that crash safety was
// not judged without an idempotent provider. Zero in a document written
// before it existed, or by a run that did not set it.
type Gateway struct {
	// KeyTTL is how long the gateway remembered an answered key from the
	// key's first request (Policy.GatewayKeyTTL).
	KeyTTL time.Duration `json:"key_ttl,omitempty"`
	// KeepsStruck says the gateway kept the keys of every example in
	// recovery (one of its requests answered indeterminately: a 5xx, a
	// timeout, a reset) until it was over, whatever KeyTTL (the runner's
	// gatewaysim.KeepKeys): only answered keys were forgotten at KeyTTL. False in a history recorded before keys were kept per key,
	// when KeyTTL was never less than a recovery floor.
	KeepsStruck bool `json:"keeps_struck,omitempty"`
	// NoIdempotency says the gateway ignored Idempotency-Key, like a
	// provider without idempotency (idemcheck's --gateway-idempotency
	// off): every request it received could charge.
	NoIdempotency bool `json:"no_idempotency,omitempty"`
	// Provider is the provider profile the gateway spoke (gateway-sim's
	// profiles: checkout, adyen, none); "" is stripe, as in every history
	// recorded before profiles.
	Provider string `json:"provider,omitempty"`
	// KeepsOnlySuccess says the provider's keys kept only a 2xx result
	// (Checkout.com's): after a 4xx or 5xx the same key paid again.
	KeepsOnlySuccess bool `json:"keeps_only_success,omitempty"`
}
