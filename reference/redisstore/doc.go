// Package redisstore is the reference's key store adapter for Redis
// (github.com/redis/go-redis/v9): reference.Store and reference.Notifier
// kept in one Redis, as idempotency libraries' Redis adapters keep them,
// with the same guarantees as the PostgreSQL adapter. Select it with
// reference.Config.Store (cmd/reference-server: --store=redis).
//
// # Records
//
//   - A key's record is one JSON value (record.go) under RecordKey, with
//     the same fields as the PostgreSQL row; every number is a string, so
//     the Lua scripts' cjson never reformats one.
//   - Its Redis TTL is the key's whole dedupe window, max(TTL, tombstone
//     TTL), set once by the claim: Redis deletes a tombstone when it is
//     forgotten. Unresolved keys are recovered long before (the sweeper).
//
// # Atomicity
//
//   - Claim is `SET key value NX PX <window>` (in a script that also
//     indexes the lease and returns the existing record on a conflict):
//     insert-if-absent, one winner. The intent (the gateway request id)
//     and the owner are in the value before the gateway is called.
//   - Every later write is a Lua script (scripts.go) that checks before it
//     writes: Finish the request id, Release and RenewLeases the owner
//     token (replica id and request id), TakeOver and LeaseStale that the
//     lease expired (compare-and-set), Reclaim that the key is forgotten.
//     Redis runs a script atomically, so check and write are one step.
//   - The Keeper renews a lease while its gateway call runs
//     (RenewLeases: all due leases in one script).
//
// # Indexes
//
//   - The lease index, a sorted set of unresolved keys by lease expiry,
//     is what LeaseStale (the sweeper) reads; the finished index, terminal
//     keys by expiry, is what Expire compacts into tombstones. An entry
//     whose record is gone is dropped when met.
//
// # Waiting
//
//   - Register counts a waiter in the record; Finish and Release PUBLISH
//     on Channel (reference.FinishPayload, reference.NotifyPayload) in the
//     same script when a waiter registered. Listen is the hub's
//     subscription; a dropped one is reported, so the hub wakes its
//     waiters to read their keys again.
//
// # Limits
//
// One Redis (a primary, or a single shard): the sweeper's scripts touch
// records named by an index, which Redis Cluster would refuse. Safety
// after a Redis crash is Redis's persistence: with appendfsync everysec a
// crash may forget the last second of claims.
package redisstore
