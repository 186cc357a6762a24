package zoo

import (
	"context"

	"github.com/idemcheck/idemcheck/reference"
)

// releaseNon2xx keeps a key only when its payment succeeded: it deletes
// the claim after every answer of 400 or more that an attempt gives
// (its 409 to a duplicate in flight and its 422 to a reused key are the
// idempotency layer's own answers, not the payment's, and release
// nothing). A decline or a gateway rejection is answered and then
// forgotten, so the client's retry claims the key afresh under a new
// gateway request id and the charge runs again; an indeterminate answer
// is forgotten the same way, as release-on-error forgets it.
//
// Incident (useautumn/autumn#1851; also #1138, #1838): a middleware that
// held keys for 24 hours after any answer was changed to release them on
// every status ≥ 400 but 409, so that a failure no longer locked the key
// for a day. A declined card is declined, the key released, and the
// client's retry after the customer topped up is charged: the customer
// was told definitively that the payment failed and paid anyway (M3,
// with M4: a decline on one try and a charge on another; found by
// key-reuse, late-retry and concurrent-duplicates, which retry after a
// decline). A charge whose answer was lost is charged again (M1, found
// by crash-window).
var releaseNon2xx = Variant{
	Name: "release-non-2xx",
	Bug:  "deletes the key after every answer of 400 or more (a decline, a rejection, a 5xx), so a retry re-runs the charge instead of replaying the failure",
	New: hooked(func(s *reference.Server) reference.Hooks {
		release := deleteClaim(s)
		return reference.Hooks{
			Indeterminate: release,
			Finished: func(ctx context.Context, j reference.Job, res reference.Result) {
				if !res.Succeeded() {
					release(ctx, j)
				}
			},
		}
	}),
}
