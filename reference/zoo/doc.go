// Package zoo is the broken-server zoo: realistic idempotency servers, each
// with one bug class seen in real implementations, each documented with the
// incident it causes. Each is the reference server itself with its bug set
// as hooks (reference.Hooks) or configuration, so the only difference from
// a correct server is the bug, and a fix to the reference's flow lands in
// every variant.
//
// # API
//
//   - Lookup(name) and Names(): the registry cmd/reference-server serves
//     from (--variant NAME); "reference" is the correct server itself.
//   - Variant: a name, the bug in one line, and New(reference.Config).
//   - Server: Handler, Run, Ready, as *reference.Server has them.
//
// # Members
//
// Check-then-act (naive.go, inprocess_mutex.go): no database claim at
// all, in place of the reference's claim protocol (Hooks.Charge).
// passthrough_key.go keeps no record at all and lets the provider's
// idempotency deduplicate (Hooks.Charge).
// Claim-based, one defect each hooked into the reference's claim flow:
// no_fingerprint.go, raw_fingerprint.go, release_on_error.go,
// stale_lease_new_id.go, sweeper_fails_in_progress.go, global_keys.go,
// no_recovery.go, crash_blind.go, sweeper_recharges.go,
// release_non_2xx.go, failure_expires_with_lock.go,
// time_in_gateway_key.go and look_alike_key.go (the key sent to the
// gateway), resend_after_5xx.go (recovery as on Stripe, run against
// Checkout.com: --gateway-provider=checkout), adyen_long_key.go (a
// gateway key longer than Adyen's 64 characters, sent without a key
// there: --gateway-provider=adyen) and
// release_wrong_key.go. Configuration wrappers around the reference
// itself: short_expiry.go (no tombstone), short_retention.go (tombstones
// for 3 TTLs), no_wait_409.go (no waiting), lease_is_retention.go (the
// lease as long as the retention window). On the Redis store (reference/redisstore, --store=redis):
// redis_get_set.go (check-then-act: GET, charge, SET) and
// redis_short_lock.go (the key in flight is a lock whose TTL lapses
// during a slow gateway call).
//
// Claim races of public incidents (scenarios/incidents/public/): on
// Redis, writes that overwrite (redis_last_writer_wins.go, whose
// overwriting flow redis_setex_claim.go and redis_read_back_lock.go also
// run, claiming without NX before the charge); on PostgreSQL,
// replay_as_409.go (check-then-act answering a finished key 409) and
// lock_wait_500.go (the reference, a duplicate in flight answered 500).
//
// Identity of public incidents, at the HTTP edge: route_template_key.go
// (a key bound to the route template, behind OrderInPath,
// order_in_path.go, which serves the order in the path only),
// anonymous.go (Anonymous: requests without credentials in one
// namespace, and anonymous-namespace, which compares no body),
// key_before_auth.go (a key recorded before authentication) and
// org_scoped_keys.go (OrgScoped: keys scoped per organisation, not per
// principal).
//
// A claim race of a public incident on PostgreSQL: lost_reclaim_409.go
// (a key swept between a conflicting claim and its read; a lost
// re-claim answered "in progress" at once).
//
// Out of bounds: reaches_oracle.go (after every charge, the gateway's
// control API on its GATEWAY_URL and toxiproxy's API wherever it may be:
// T1, the harness untouched).
//
// builtin.Members says which scenario family finds each bug and which
// check it must fail; the self-validation test holds the zoo to it.
package zoo
