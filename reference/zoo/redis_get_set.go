package zoo

import (
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/redisstore"
)

// redisGetSet is the check-then-act server on Redis (naive.go's flow on
// the Redis store): GET the key; when it is absent, charge at the gateway
// under a fresh request id, then SET the response. Nothing claims the key
// between the GET and the SET, so duplicates in flight together all miss
// the GET and each charges under its own gateway request id.
//
// Incident: a cache read when the request starts and written when it
// ends, with nothing claiming the key between, lets two identical
// concurrent retries both proceed; the customer is charged twice (M1,
// found by concurrent-duplicates). (A claim written before the charge but
// without compare-and-set, paveg/hono-idempotency#91, is
// redis-read-back-lock.)
var redisGetSet = Variant{
	Name: "redis-get-set",
	Bug:  "check-then-act on Redis: GET the key, charge, then SET the response",
	New: func(cfg reference.Config) (Server, error) {
		if _, err := redisstore.From(cfg.Store); err != nil {
			return nil, err
		}
		return naive.New(cfg)
	},
}
