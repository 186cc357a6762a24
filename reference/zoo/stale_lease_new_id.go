package zoo

import (
	"context"
	"fmt"

	"github.com/idemcheck/idemcheck/reference"
)

// staleLeaseNewID takes over an expired lease like the reference, but
// re-runs the charge under a new gateway request id ("the old attempt is
// dead, start a clean one") instead of re-sending the recorded one, so the
// gateway cannot tell the re-run from a new charge.
//
// Incident: the owner crashes (or gets an indeterminate answer) while the
// gateway has already charged; the retry that takes the key over charges
// again (M1, found by crash-window).
var staleLeaseNewID = Variant{
	Name: "stale-lease-new-id",
	Bug:  "takes over an expired lease and re-runs the charge with a new gateway request id",
	New: hooked(func(s *reference.Server) reference.Hooks {
		return reference.Hooks{TakeoverID: func(ctx context.Context, rec *reference.Record) (string, error) {
			id := reference.NewID("req_")
			_, err := s.Config().Pool.Exec(ctx,
				`UPDATE idempotency_keys SET request_id = $3 WHERE tenant = $1 AND key_hash = $2 AND lease_owner = $4`,
				rec.Tenant, rec.KeyHash, id, s.Config().ReplicaID)
			if err != nil {
				return "", fmt.Errorf("new request id: %w", err)
			}
			return id, nil
		}}
	}),
}
