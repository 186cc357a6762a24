// Package reference is idemcheck's reference idempotency server: the charge
// protocol of docs/protocol.md on PostgreSQL (pgx), charging through a
// Stripe-like gateway. It shows what correct looks like, proves the harness
// raises no false alarms, and is meant to be copied. README.md has the state
// machine, the dedupe window and the failure handling in prose.
//
// Replicas are stateless: every decision is one atomic operation of the
// key store (in PostgreSQL a conditional statement: INSERT … ON CONFLICT DO
// NOTHING, UPDATE … WHERE lease expired, FOR UPDATE SKIP LOCKED), so any
// number of replicas on one database are as safe as one. No in-process
// lock is trusted for safety.
//
// The pieces are small and exported. The charge flow is written once: a
// broken variant of the zoo is this Server with [Hooks] set (one step of
// the flow overridden), so a fix to the flow lands in every variant; with
// no hooks set the Server is the reference.
//
// # Serving
//
//   - [New] builds a [Server] from a [Config] (pool, gateway, TTL, tombstone
//     TTL, max wait, lease, sweeper timing, injected clock, logger, metrics
//     registry); [Server.Handler] serves POST /v1/charges, GET /healthz and
//     GET /metrics; [Server.Run] runs the notification listener and the
//     sweeper; [Server.SweepOnce] runs one sweep (tests drive it with a fake
//     clock).
//   - [Server.SetHooks] overrides steps of the flow ([Hooks]); the
//     answers a hook may give are [Answer], [Server.Conflict],
//     [Server.Mismatch], [Server.Unavailable], [UnknownOutcome]; the
//     gateway attempt a hook sees is a [Job].
//   - [Migrate] applies the embedded schema under an advisory lock, safe
//     when replicas start together.
//   - cmd/reference-server wraps all of it as a process configured by
//     LISTEN_ADDR, DATABASE_URL, GATEWAY_URL, GATEWAY_API_KEY,
//     IDEMPOTENCY_TTL and flags.
//
// # Request parsing
//
//   - [ParseCharge] validates a request in the order a client can fix it
//     (401, 400 key, 415, 413, 400 JSON, 400 field) and returns a
//     [ChargeRequest]; failures are [*RequestError] naming the field.
//   - [ParseIdempotencyKey] (bare and quoted sf-string forms), [ParseBearer],
//     [TenantID] (the stored identity of a bearer token), [KeyHash].
//   - [ParseChargeBody] checks the fields and returns [ChargeParams].
//
// # Fingerprints
//
//   - [Canonicalize] is RFC 8785 JCS (github.com/gowebpki/jcs);
//     [Fingerprint] is SHA-256 over method, path and canonical body.
//
// # Storage
//
//   - [Store]: the key store adapter interface the flow runs on, with the
//     atomicity each method must guarantee: [Store.Claim] (insert-if-absent,
//     returning the existing record), [Store.Lookup], [Store.Register] (a
//     waiter), [Store.Finish] (by the holder of the request id) and
//     [Store.Release] (by the lease owner), [Store.TakeOver] and
//     [Store.LeaseStale] (recovery once a lease expired), [Store.Reclaim],
//     [Store.Expire] (compaction into tombstones, then deletion),
//     [Store.RenewLeases], [Store.Ping]. [Notifier] is a store's optional
//     ability to wake waiters at once.
//   - [PostgresStore] ([NewPostgresStore]): the PostgreSQL adapter, one
//     statement per transition (INSERT … ON CONFLICT DO NOTHING, UPDATE …
//     WHERE lease expired, FOR UPDATE SKIP LOCKED), waking waiters with
//     LISTEN/NOTIFY. reference/redisstore is the Redis adapter; a
//     [Config.Store] selects one.
//   - [Claim], [Record], the State* constants.
//   - [Keeper]: one per replica, renews the [Lease]s of the claims in
//     flight, all due ones in one call ([Store.RenewLeases]).
//
// # Waiting
//
//   - [Hub]: one subscription to the store's notifications per replica
//     ([Notifier]; LISTEN for PostgreSQL), fanned out to in-process
//     [Subscription]s; a finish notification carries the result ([Notice],
//     [FinishPayload]). Over a store that does not notify, the hub wakes
//     its waiters every [PollInterval].
//
// # The gateway
//
//   - [Gateway] (Charge, FindCharge), [GatewayRequest] (the request id is the
//     gateway Idempotency-Key), [Outcome] and [Classify]: Charged, Declined
//     and Rejected are definitive; everything else is Indeterminate.
//   - [GatewayAPI] (Gateway.API, --gateway-api): charges through
//     /v1/charges or through PaymentIntents created with confirm=true; the
//     claim protocol is the same, the answer names the charge either way.
//   - [GatewayProvider] (Gateway.Provider, --gateway-provider): stripe,
//     checkout (Checkout.com's POST /payments) or adyen (Adyen's POST
//     /v71/payments), one dialect per file (gateway_<provider>.go). A
//     re-send is looked up first where the provider keeps no result after
//     a 5xx (Checkout.com: GET /payments?reference=, LooksUpFirst); Adyen,
//     which has no lookup, keeps the first result under the key.
//
// # Answers
//
//   - [Result] (stored, replayed byte for byte), [ResultFor], [WriteResult]
//     (Idempotent-Replayed: true), [Problem], [WriteProblem], [ProblemFor]
//     (RFC 9457 problem+json, Retry-After).
//
// # Operations
//
//   - [Metrics]: claims, replays, conflicts, mismatches, waits, recoveries,
//     gateway calls, expiry, refusals; slog structured logs.
package reference
