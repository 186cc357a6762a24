package zoo

import "github.com/idemcheck/idemcheck/reference"

// shortRetention is the reference with its tombstones kept for three TTLs
// while the service promises a retry window many TTLs long: a retry
// shortly after the TTL is still deduplicated, one near the end of the
// promised window is not.
//
// Incident: a client whose retry queue backs off for hours, inside the
// documented retry window, is charged again after the server's key
// cleanup ran (E2, found by late-retry only when it probes the retry
// window up to its end).
var shortRetention = Variant{
	Name: "short-retention",
	Bug:  "keeps keys for 3x the TTL while promising a retry window of 20x",
	New: func(cfg reference.Config) (Server, error) {
		if cfg.TTL == 0 {
			cfg.TTL = reference.DefaultTTL
		}
		cfg.TombstoneTTL = 3 * cfg.TTL
		return newReference(cfg)
	},
}
