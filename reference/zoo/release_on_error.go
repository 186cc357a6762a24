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
	New: func(cfg reference.Config) (Server, error) {
		b, err := newBase(cfg)
		if err != nil {
			return nil, err
		}
		b.indeterminate = func(ctx context.Context, j job) {
			if _, err := b.store.Pool().Exec(ctx,
				`DELETE FROM idempotency_keys WHERE tenant = $1 AND key_hash = $2 AND request_id = $3`,
				j.scope, j.keyHash, j.requestID); err != nil {
				b.log.Warn("release key after gateway error", "err", err)
			}
		}
		return b, nil
	},
}
