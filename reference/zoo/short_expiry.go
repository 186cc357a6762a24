package zoo

import "github.com/idemcheck/idemcheck/reference"

// shortExpiry is the reference configured without tombstones: a finished
// key is forgotten as soon as its TTL passes, while the service promises
// (in its API docs, in the client's retry policy) a longer retry window.
// The reference reads a zero tombstone TTL as "the default", so the
// variant pins the tombstone window to the TTL itself.
//
// Incident: a mobile client retries after a long network outage, inside
// the promised window but past the TTL, and is charged again (E2, found by
// late-retry).
var shortExpiry = Variant{
	Name: "short-expiry",
	Bug:  "expires keys after the TTL with no tombstone, while promising a longer retry window",
	New: func(cfg reference.Config) (Server, error) {
		if cfg.TTL == 0 {
			cfg.TTL = reference.DefaultTTL
		}
		cfg.TombstoneTTL = cfg.TTL
		return newReference(cfg)
	},
}
