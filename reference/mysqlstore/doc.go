// Package mysqlstore is the reference's key store adapter for MySQL
// (MariaDB 10.6+ or MySQL 8, InnoDB, through go-sql-driver/mysql):
// reference.Store kept in one table, with its own SQL, with the same
// guarantees as the PostgreSQL adapter. Select it with
// reference.Config.Store (cmd/reference-server: --store=mysql).
//
// # Schema
//
//   - schema.sql: the table idempotency_keys, the PostgreSQL row's columns
//     with binary keys and text (compared byte for byte) and DATETIME(6)
//     times in UTC. Migrate creates it if absent, under GET_LOCK, so
//     replicas starting together may all call it.
//   - Open and Config (open.go): the pool, whatever the DSN says about
//     time zone, time precision and affected-row counting, which the
//     statements rely on.
//
// # Atomicity
//
//   - Claim is INSERT … ON DUPLICATE KEY UPDATE that changes nothing on a
//     duplicate: insert-if-absent, one winner, told apart by the affected
//     rows (1 inserted, 0 untouched). The intent (the gateway request id),
//     the owner and the lease are in the row before the gateway is called.
//   - Every later write is one conditional statement whose WHERE is the
//     check (store.go): Finish the request id, Release the owner and
//     request id, TakeOver that the lease expired, Reclaim that the key
//     is forgotten. InnoDB's row lock serialises them on a key, and a
//     waiting UPDATE re-reads the row it waited for.
//   - What must also return or count rows runs in a READ COMMITTED
//     transaction (sweep.go): TakeOver reads the row it took under its
//     lock; RenewLeases locks the leases still held (SELECT … FOR UPDATE)
//     before extending them; LeaseStale and Expire lock a batch with
//     SELECT … FOR UPDATE SKIP LOCKED, so concurrent sweepers share the
//     work.
//   - A deadlock (1213) or lock wait timeout (1205) undoes the statement;
//     it is run again a bounded number of times (retry.go). Any other
//     error is returned and the flow answers 503.
//   - Every time compared is the caller's (reference.Config.Now), never
//     the database's NOW(): leases and expiry follow one clock, which
//     tests drive with a fake one, as with PostgreSQL.
//
// # Waiting
//
// MySQL has no LISTEN/NOTIFY: the store is not a reference.Notifier, so
// the hub wakes every waiter each reference.PollInterval to read its key
// again, and a duplicate still waits up to max wait before 409. Register
// is therefore a read: no waiter count to keep.
//
// # Restarts
//
// database/sql replaces a connection that died with the database (the
// driver checks a pooled connection's liveness before reuse); InnoDB's
// redo log keeps every committed claim across a crash.
package mysqlstore
