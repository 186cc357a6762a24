package garden

import (
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/zoo"
)

// exactTTL forgets a key exactly at its TTL, keeping no tombstone, and
// promises no retry window beyond the TTL (builtin declares retry_window
// = ttl for it). Keeping a key no longer than promised is a legitimate
// choice: a retry just inside the TTL is deduplicated, one just after it
// is a new payment, and a retry within the clock band around the TTL
// proves nothing either way (UNKNOWN, never FAILED).
var exactTTL = zoo.Variant{
	Name: "exact-ttl",
	Bug:  "none: keys expire exactly at the TTL, which is also the retry window it promises",
	New: func(cfg reference.Config) (zoo.Server, error) {
		if cfg.TTL == 0 {
			cfg.TTL = reference.DefaultTTL
		}
		cfg.TombstoneTTL = cfg.TTL
		s, err := reference.New(cfg)
		if err != nil {
			return nil, err
		}
		return s, nil
	},
}
