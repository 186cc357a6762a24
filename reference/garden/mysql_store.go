package garden

import (
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/mysqlstore"
)

// mysqlStore is the reference with its keys in MySQL
// (reference/mysqlstore, --store=mysql), as many services keep them: the
// claim is INSERT … ON DUPLICATE KEY UPDATE, every later write a
// conditional UPDATE on the request id and owner, the sweeper's batches
// locked with SELECT … FOR UPDATE SKIP LOCKED, the lease renewed while
// the gateway call runs, the intent recorded before the call. MySQL has no
// LISTEN/NOTIFY, so its waiters poll: a harness that expects the
// reference's instant wake-ups would wrongly fail it.
var mysqlStore = onStore("mysql-store",
	"none: keys in MySQL: INSERT … ON DUPLICATE KEY claim, conditional updates by request id and owner, leases renewed during the gateway call, intent recorded before the call",
	func(s reference.Store) error { _, err := mysqlstore.From(s); return err })
