package zoo

import (
	"context"

	"github.com/idemcheck/idemcheck/reference"
)

// releaseOnError deletes the key's claim when the gateway call errors (a
// 5xx, a timeout, a reset), reasoning that "the charge failed, so the
// client may try again". The retry claims the key afresh and sends a new
// gateway request id, which the gateway cannot deduplicate against the
// first one, which may well have charged.
//
// Incident: the gateway charges, then its response is lost
// (charge-then-fail); the client's retry charges again (M1, found by
// crash-window).
var releaseOnError = Variant{
	Name: "release-on-error",
	Bug:  "deletes the key when the gateway call errors, so a retry starts afresh with a new request id",
	New: hooked(func(s *reference.Server) reference.Hooks {
		return reference.Hooks{Indeterminate: deleteClaim(s)}
	}),
}

// deleteClaim deletes the claim an attempt was made under, so that the
// next request with the key claims it afresh under a new request id.
func deleteClaim(s *reference.Server) func(ctx context.Context, j reference.Job) {
	return func(ctx context.Context, j reference.Job) {
		if _, err := s.Config().Pool.Exec(ctx,
			`DELETE FROM idempotency_keys WHERE tenant = $1 AND key_hash = $2 AND request_id = $3`,
			j.Tenant, j.KeyHash, j.RequestID); err != nil {
			s.Config().Logger.Warn("release key after a failed attempt", "err", err)
		}
	}
}
