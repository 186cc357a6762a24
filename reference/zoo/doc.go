// Package zoo is the broken-server zoo: realistic idempotency servers, each
// with one bug class seen in real implementations, each documented with the
// incident it causes. They reuse the reference's exported pieces (request
// parsing and validation, the canonical fingerprint, the gateway client,
// the PostgreSQL store, the notification hub, result writing), so the only
// difference from a correct server is the bug. The reference's own code
// path holds no defect switch: variants are separate types or wrappers.
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
// Check-then-act (naive.go, inprocess_mutex.go, gateway_key_as_lock.go):
// no database claim at all.
// Claim-based, one defect each on the shared claim flow of base.go:
// no_fingerprint.go, raw_fingerprint.go, release_on_error.go,
// stale_lease_new_id.go, sweeper_fails_in_progress.go, global_keys.go,
// no_recovery.go, crash_blind.go. Configuration wrappers around the
// reference itself: short_expiry.go (no tombstone), short_retention.go
// (tombstones for 3 TTLs), no_wait_409.go (no waiting).
//
// builtin.Members says which scenario family finds each bug and which
// check it must fail; the self-validation test holds the zoo to it.
package zoo
