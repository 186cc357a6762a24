package zoo

import (
	"context"

	"github.com/idemcheck/idemcheck/reference"
)

// releaseWrongKey holds a key's claim as a lock for the key's whole
// retention window and means to delete that lock when the gateway call
// errors, so that the client may retry. But the error path names the key
// as the client sent it, without the tenant it is stored under: the
// delete matches no row, reports no error, and the lock stays. Every
// retry of the payment is refused as in progress until the lock expires
// (in production a day). Unlike lease-is-retention, a live owner leaves
// the key locked after any gateway error, not only a dead one.
//
// Incident (LerianStudio/midaz#1799): the cleanup after a failed
// transaction deleted the raw Idempotency-Key header value instead of
// the prefixed key it was stored under; Redis deleted nothing and the
// stale lock blocked the client's retries until its TTL (M6, found by
// crash-window: every gateway error leaves the key stuck).
var releaseWrongKey = Variant{
	Name: "release-wrong-key",
	Bug:  "the claim is a lock held for the retention window; the error path deletes the key without its tenant prefix, deleting nothing, so the lock stays",
	New: leaseAsRetention(hooked(func(s *reference.Server) reference.Hooks {
		return reference.Hooks{Indeterminate: func(ctx context.Context, j reference.Job) {
			tag, err := s.Config().Pool.Exec(ctx,
				`DELETE FROM idempotency_keys WHERE tenant = '' AND key_hash = $1`, j.KeyHash)
			if err != nil {
				s.Config().Logger.Warn("release key after gateway error", "err", err)
				return
			}
			s.Config().Logger.Debug("released key after gateway error", "deleted", tag.RowsAffected())
		}}
	})),
}
