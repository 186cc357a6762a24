package zoo

import (
	"context"

	"github.com/idemcheck/idemcheck/reference"
)

// failureExpiresWithLock stores a definitive failure (a decline, a
// gateway rejection) like the reference, but copies the record's expiry
// from the claim's lock instead of counting a TTL from the request: the
// failure expires, and the key is free again, when the owner's lease
// does. That is at most a lease after the answer, and already past when
// the gateway call outlasted a lease that was not renewed. A retry after
// that claims the key afresh under a new gateway request id and runs the
// charge again. Successes are kept for the TTL, as the reference keeps
// them.
//
// Incident (josipmusa/idempotency4j#45): the store's failure path set
// expires_at = lock_expires_at, so a failed record could be written
// already expired and purged at once. Here a declined payment's retry a
// few seconds later, after the customer's card was topped up, is
// charged: the client was told definitively that the payment failed
// (M3, with M4: a decline on one try and a charge on another; found by
// late-retry, and by key-reuse and concurrent-duplicates whenever their
// request after a decline comes after the lease).
var failureExpiresWithLock = Variant{
	Name: "failure-expires-with-lock",
	Bug:  "a stored failure expires when the claim's lock does, not a TTL later, so a retry soon after a decline runs the charge again",
	New: hooked(func(s *reference.Server) reference.Hooks {
		return reference.Hooks{Finished: func(ctx context.Context, j reference.Job, res reference.Result) {
			if res.Succeeded() {
				return
			}
			if _, err := s.Config().Pool.Exec(ctx,
				`UPDATE idempotency_keys SET expires_at = lease_until, forget_at = lease_until
				WHERE tenant = $1 AND key_hash = $2 AND request_id = $3 AND state = 'failed'`,
				j.Tenant, j.KeyHash, j.RequestID); err != nil {
				s.Config().Logger.Warn("expire a failure with its lock", "err", err)
			}
		}}
	}),
}
