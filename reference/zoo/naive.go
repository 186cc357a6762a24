package zoo

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
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
	New:  func(cfg reference.Config) (Server, error) { return newCheckThenAct(cfg) },
}

// checkThenAct is the naive flow; inprocess-mutex wraps it in a lock.
type checkThenAct struct {
	cfg   reference.Config
	store *reference.Store
	gw    *reference.Gateway
	log   *slog.Logger
	ready chan struct{}
}

func newCheckThenAct(cfg reference.Config) (*checkThenAct, error) {
	b, err := newBase(cfg) // for its defaults and validation
	if err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	close(ready)
	return &checkThenAct{cfg: b.cfg, store: b.store, gw: b.gw, log: b.log, ready: ready}, nil
}

func (n *checkThenAct) Handler() http.Handler         { return chargeMux(n.serveCharge, n.cfg) }
func (n *checkThenAct) Ready() <-chan struct{}        { return n.ready }
func (n *checkThenAct) Run(ctx context.Context) error { <-ctx.Done(); return nil }

func (n *checkThenAct) serveCharge(w http.ResponseWriter, r *http.Request) {
	_, req, err := parse(r)
	if err != nil {
		refuse(w, err)
		return
	}
	n.charge(r.Context(), req).write(w)
}

func (n *checkThenAct) charge(ctx context.Context, req *reference.ChargeRequest) answer {
	ctx = context.WithoutCancel(ctx)
	rec, err := n.store.Lookup(ctx, req.Tenant, req.KeyHash)
	switch {
	case err == nil && !bytes.Equal(rec.Fingerprint, req.Fingerprint):
		return mismatch()
	case err == nil && rec.Terminal():
		return answer{result: &rec.Result, replayed: true}
	case err == nil:
		return conflict()
	case !errors.Is(err, reference.ErrNotFound):
		return unavailable(n.log, err)
	}
	// The bug: nothing holds the key between the SELECT above and the
	// INSERT below, while the gateway call takes hundreds of milliseconds.
	id := newID("req_")
	out := n.gw.Charge(ctx, reference.GatewayRequest{RequestID: id, ChargeParams: req.Params})
	if !out.Definitive() {
		return gatewayUnknown(out)
	}
	res, _ := reference.ResultFor(out, req.Params)
	n.store.Claim(ctx, reference.Claim{Tenant: req.Tenant, KeyHash: req.KeyHash, Key: req.Key, Fingerprint: req.Fingerprint,
		RequestID: id, Params: req.Params, Owner: "naive", Now: time.Now(), Lease: n.cfg.Lease, TTL: n.cfg.TTL, Forget: n.cfg.TombstoneTTL})
	if _, err := n.store.Finish(ctx, req.Tenant, req.KeyHash, id, res, time.Now()); err != nil {
		n.log.Warn("store response", "err", err)
	}
	return answer{result: &res}
}
