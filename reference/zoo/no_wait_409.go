package zoo

import (
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// noWait409 is the reference configured not to wait: a duplicate that
// finds its key in flight is answered 409 + Retry-After at once instead of
// being held until the owner finishes. It is safe (nothing is charged
// twice) but not what the IETF draft asks.
//
// Incident: none for money; clients spin in a tight retry loop while a slow
// gateway call completes (R3 NON-STRICT, found by concurrent-duplicates).
var noWait409 = Variant{
	Name: "no-wait-409",
	Bug:  "answers 409 at once to a duplicate in flight instead of waiting",
	New: func(cfg reference.Config) (Server, error) {
		cfg.MaxWait = time.Nanosecond // zero would mean the default
		return newReference(cfg)
	},
}
