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
	New: func(cfg reference.Config) (Server, error) {
		b, err := newBase(cfg)
		if err != nil {
			return nil, err
		}
		b.noTakeover = true
		b.stale = func(ctx context.Context, rec *reference.Record) {
			res := reference.Result{Status: http.StatusPaymentRequired,
				Body: []byte(`{"error":{"type":"card_error","code":"processing_error","message":"the payment could not be completed"}}`)}
			if _, err := b.store.Finish(ctx, rec.Tenant, rec.KeyHash, rec.RequestID, res, time.Now()); err != nil {
				b.log.Warn("fail stale key", "err", err)
			}
		}
		return b, nil
	},
}
