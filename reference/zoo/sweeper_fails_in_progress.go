package zoo

import (
	"context"
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// sweeperFailsInProgress leaves stuck keys to a janitor: a retry never
// takes a key over (it waits, then 409), and the sweeper marks every key
// still in progress after the recovery window as failed, storing a
// payment-failed answer without asking the gateway what happened.
//
// Incident: the replica crashes while the gateway holds a committed charge;
// the sweeper records a failure and every retry is told the payment
// failed, while the money moved (M3, found by crash-window).
var sweeperFailsInProgress = Variant{
	Name: "sweeper-fails-in-progress",
	Bug:  "the sweeper marks stale in-progress keys failed without asking the gateway",
	New: hooked(func(s *reference.Server) reference.Hooks {
		return reference.Hooks{
			MayTakeOver: func(*reference.Record) bool { return false },
			SweepStale: func(ctx context.Context, rec *reference.Record) reference.OutcomeKind {
				res := reference.Result{Status: http.StatusPaymentRequired,
					Body: []byte(`{"error":{"type":"card_error","code":"processing_error","message":"the payment could not be completed"}}`)}
				if _, err := s.Store().Finish(ctx, rec.Tenant, rec.KeyHash, rec.RequestID, res, time.Now()); err != nil {
					s.Config().Logger.Warn("fail stale key", "err", err)
				}
				return reference.Declined
			},
		}
	}),
}
