package zoo

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// naive is the check-then-act server, the first version most teams write:
// SELECT the key; if it is absent, charge at the gateway under a fresh
// request id; then INSERT the response. Nothing is claimed before the
// gateway call, so two duplicates in flight together both miss the SELECT
// and both charge.
//
// Incident: two concurrent duplicates (a double-clicked Pay button, a
// client retry racing a slow first try) charge the customer twice (M1,
// found by concurrent-duplicates).
var naive = Variant{
	Name: "naive",
	Bug:  "check-then-act: looks the key up, charges, then stores the response",
	New: withoutSweeper(hooked(func(s *reference.Server) reference.Hooks {
		return reference.Hooks{Charge: checkThenAct{s}.charge}
	})),
}

// checkThenAct is the naive flow in place of the reference's claim;
// inprocess-mutex wraps it in a lock.
type checkThenAct struct{ s *reference.Server }

func (n checkThenAct) charge(ctx context.Context, req *reference.ChargeRequest) reference.Answer {
	ctx = context.WithoutCancel(ctx)
	rec, err := n.s.Store().Lookup(ctx, req.Tenant, req.KeyHash)
	switch {
	case err == nil && !bytes.Equal(rec.Fingerprint, req.Fingerprint):
		return n.s.Mismatch()
	case err == nil && rec.Terminal():
		return reference.Answer{Result: &rec.Result, Replayed: true}
	case err == nil:
		return n.s.Conflict()
	case !errors.Is(err, reference.ErrNotFound):
		return n.s.Unavailable(err)
	}
	// The bug: nothing holds the key between the SELECT above and the
	// INSERT below, while the gateway call takes hundreds of milliseconds.
	id := reference.NewID("req_")
	out := n.s.Config().Gateway.Charge(ctx, reference.GatewayRequest{RequestID: id, ChargeParams: req.Params})
	if !out.Definitive() {
		return reference.UnknownOutcome(out)
	}
	res, _ := reference.ResultFor(out, req.Params)
	n.store(ctx, req, id, res)
	return reference.Answer{Result: &res}
}

// store inserts the key with its response, after the fact.
func (n checkThenAct) store(ctx context.Context, req *reference.ChargeRequest, id string, res reference.Result) {
	cfg := n.s.Config()
	n.s.Store().Claim(ctx, reference.Claim{Tenant: req.Tenant, KeyHash: req.KeyHash, Key: req.Key, Fingerprint: req.Fingerprint,
		RequestID: id, Params: req.Params, Owner: "naive", Now: time.Now(), Lease: cfg.Lease, TTL: cfg.TTL, Forget: cfg.TombstoneTTL})
	if _, err := n.s.Store().Finish(ctx, req.Tenant, req.KeyHash, id, res, time.Now()); err != nil {
		cfg.Logger.Warn("store response", "err", err)
	}
}
