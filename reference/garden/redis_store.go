package garden

import (
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/redisstore"
)

// redisStore is the reference with its keys in Redis (reference/redisstore,
// --store=redis), as most idempotency libraries keep them: the claim is SET
// NX PX, every later write a Lua script checking the owner token, the lease
// renewed while the gateway call runs, the intent recorded before the call.
// Keeping keys in Redis instead of PostgreSQL is a legitimate choice when
// the adapter keeps the Store contract; a harness that only passes the
// PostgreSQL reference would wrongly fail it.
var redisStore = onStore("redis-store",
	"none: keys in Redis: SET NX PX claim, owner token checked by a Lua script on every write, lease renewed during the gateway call, intent recorded before the call",
	func(s reference.Store) error { _, err := redisstore.From(s); return err })
