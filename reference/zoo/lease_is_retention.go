package zoo

import (
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// leaseIsRetention claims keys like the reference, but the claim's lease
// and the key's retention are one duration: a claim is held for as long
// as a finished key is kept (the tombstone window), not for a short
// lease that its owner renews while it works. An owner that releases the
// key (an indeterminate gateway answer) frees it for recovery at once,
// as the reference does; an owner that dies, or that gives up without
// releasing (its database gone when it meant to store the answer),
// leaves the key in progress until the retention window ends, and only
// then does a retry or the sweeper take it over. Unlike no-recovery and
// crash-blind the key is recovered in the end, a retention window (in
// production a day) too late.
//
// Incident (benhendayoussef/idempotency-spring-boot-starter#11; also
// aws-powertools/powertools-lambda-python#1038): a process killed
// mid-request locks its key for the whole retention window; every retry
// of that payment gets 409 until the record expires (M6, found by
// crash-window).
var leaseIsRetention = Variant{
	Name: "lease-is-retention",
	Bug:  "the claim's lease is the retention window: a key whose owner died stays in progress until the record expires",
	New:  leaseAsRetention(newReference),
}

// leaseAsRetention builds a variant whose claims are leased for the
// retention window.
func leaseAsRetention(build func(reference.Config) (Server, error)) func(reference.Config) (Server, error) {
	return func(cfg reference.Config) (Server, error) {
		cfg.Lease = retention(cfg)
		return build(cfg)
	}
}

// retention is how long the reference keeps a key bound to its request
// under cfg: max(TTL, tombstone TTL), each defaulted as the reference
// defaults it.
func retention(cfg reference.Config) time.Duration {
	ttl, tomb := cfg.TTL, cfg.TombstoneTTL
	if ttl == 0 {
		ttl = reference.DefaultTTL
	}
	if tomb == 0 {
		tomb = reference.DefaultTombstoneTTL
	}
	return max(ttl, tomb)
}
