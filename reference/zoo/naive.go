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
		return reference.Hooks{Charge: checkThenAct{s: s}.charge}
	})),
}

// checkThenAct is the naive flow in place of the reference's claim;
// inprocess-mutex wraps it in a lock. answer is how a finished key is
// answered (nil: replayed).
type checkThenAct struct {
	s      *reference.Server
	answer func(*reference.Record) reference.Answer
}

func (n checkThenAct) charge(ctx context.Context, req *reference.ChargeRequest) reference.Answer {
	ctx = context.WithoutCancel(ctx)
	answer := n.answer
	if answer == nil {
		answer = replay
	}
	if a, found := n.found(ctx, req, answer); found {
		return a
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

// found looks the key up and answers a request whose key is there: a
// different body is refused, a finished key answered by answer, a key in
// flight refused with 409 at once. found is false when the key is absent.
func (n checkThenAct) found(ctx context.Context, req *reference.ChargeRequest, answer func(*reference.Record) reference.Answer) (reference.Answer, bool) {
	rec, err := n.s.Store().Lookup(ctx, req.Tenant, req.KeyHash)
	switch {
	case errors.Is(err, reference.ErrNotFound):
		return reference.Answer{}, false
	case err != nil:
		return n.s.Unavailable(err), true
	case !bytes.Equal(rec.Fingerprint, req.Fingerprint):
		return n.s.Mismatch(), true
	case rec.Terminal():
		return answer(rec), true
	}
	return n.s.Conflict(), true
}

// replay answers a finished key with its stored result.
func replay(rec *reference.Record) reference.Answer {
	return reference.Answer{Result: &rec.Result, Replayed: true}
}

// store inserts the key with its response, after the fact.
func (n checkThenAct) store(ctx context.Context, req *reference.ChargeRequest, id string, res reference.Result) {
	n.s.Store().Claim(ctx, claimOf(n.s, req, id))
	if _, err := n.s.Store().Finish(ctx, req.Tenant, req.KeyHash, id, res, time.Now()); err != nil {
		n.s.Config().Logger.Warn("store response", "err", err)
	}
}

// claimOf is the record of req under gateway request id id, claimed now.
func claimOf(s *reference.Server, req *reference.ChargeRequest, id string) reference.Claim {
	cfg := s.Config()
	return reference.Claim{Tenant: req.Tenant, KeyHash: req.KeyHash, Key: req.Key, Fingerprint: req.Fingerprint,
		RequestID: id, Params: req.Params, Owner: "naive", Now: time.Now(), Lease: cfg.Lease, TTL: cfg.TTL, Forget: cfg.TombstoneTTL}
}
