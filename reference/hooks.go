package reference

import "context"

// Hooks are the override points of a server's charge flow. The reference
// sets none; each of the zoo's deliberately broken variants is the
// reference with one or two of them set, so that a fix to the flow lands
// in every variant at once. A nil hook is the reference's behaviour.
type Hooks struct {
	// Request adjusts a parsed request before it is answered: the
	// namespace its key is stored under (Tenant) and the identity of its
	// body (Fingerprint).
	Request func(req *ChargeRequest)
	// Charge answers a valid request in place of the claim protocol.
	Charge func(ctx context.Context, req *ChargeRequest) Answer
	// MayTakeOver says whether a retry may take over an unresolved key
	// whose lease ran out (default: always). A key it may not take over is
	// waited for until MaxWait.
	MayTakeOver func(rec *Record) bool
	// TakeoverID is the gateway request id that a takeover (by a retry or
	// the sweeper) sends (default: the recorded one).
	TakeoverID func(ctx context.Context, rec *Record) (string, error)
	// Indeterminate records an attempt whose gateway outcome is unknown
	// (default: Store.Release).
	Indeterminate func(ctx context.Context, j Job)
	// Finished runs after an attempt stored its definitive result (not
	// when another holder of the request id had stored it first);
	// default: nothing more.
	Finished func(ctx context.Context, j Job, res Result)
	// GatewayKey is the Idempotency-Key an attempt sends to the gateway
	// (default: the claim's recorded request id, the same on every
	// attempt); "" sends none. The request's metadata names the recorded
	// id whatever the key, so a lookup finds the payment.
	GatewayKey func(j Job) string
	// SweepStale resolves an unresolved key the sweeper leased and tells
	// how (default: re-send its request id).
	SweepStale func(ctx context.Context, rec *Record) OutcomeKind
	// Sweep is more work for every sweep, after the stale keys and before
	// expiry.
	Sweep func(ctx context.Context)
	// Reclaim re-claims a finished key past its dedupe window that a
	// request met (default: Store.Reclaim, in place) and reports whether
	// it did; when not, the key is read again, and when it says the key
	// is gone (ErrNotFound), the key is claimed as one that vanished.
	Reclaim func(ctx context.Context, c Claim) (bool, error)
	// LostReclaim answers a request whose claim of a key that vanished
	// (deleted since its own claim conflicted) lost to another request
	// (default: none, the key is read again and judged as found).
	LostReclaim func(req *ChargeRequest) (Answer, bool)
	// LooksUpFirst says whether a re-send is first looked up at the
	// gateway (default: the provider's rule, Gateway.LooksUpFirst: on
	// Checkout.com, which keeps no result after a 5xx, always).
	LooksUpFirst func() bool
}

// SetHooks overrides steps of the server's flow; call it before Handler
// and Run.
func (s *Server) SetHooks(h Hooks) { s.hooks = h }

// adjust applies the Request hook.
func (s *Server) adjust(req *ChargeRequest) {
	if req != nil && s.hooks.Request != nil {
		s.hooks.Request(req)
	}
}

// mayTakeOver applies the MayTakeOver hook.
func (s *Server) mayTakeOver(rec *Record) bool {
	return s.hooks.MayTakeOver == nil || s.hooks.MayTakeOver(rec)
}

// takeoverID applies the TakeoverID hook.
func (s *Server) takeoverID(ctx context.Context, rec *Record) (string, error) {
	if s.hooks.TakeoverID == nil {
		return rec.RequestID, nil
	}
	return s.hooks.TakeoverID(ctx, rec)
}

// indeterminate applies the Indeterminate hook.
func (s *Server) indeterminate(ctx context.Context, j Job) {
	if s.hooks.Indeterminate != nil {
		s.hooks.Indeterminate(ctx, j)
		return
	}
	s.Release(ctx, j)
}

// finished applies the Finished hook to a result the attempt stored.
func (s *Server) finished(ctx context.Context, j Job, res Result, a Answer) {
	if s.hooks.Finished != nil && a.Result != nil && !a.Replayed {
		ctx, cancel := context.WithTimeout(ctx, dbTimeout)
		defer cancel()
		s.hooks.Finished(ctx, j, res)
	}
}

// reclaim applies the Reclaim hook.
func (s *Server) reclaim(ctx context.Context, c Claim) (bool, error) {
	if s.hooks.Reclaim != nil {
		return s.hooks.Reclaim(ctx, c)
	}
	return s.store.Reclaim(ctx, c)
}

// lostReclaim applies the LostReclaim hook.
func (s *Server) lostReclaim(req *ChargeRequest) (Answer, bool) {
	if s.hooks.LostReclaim != nil {
		return s.hooks.LostReclaim(req)
	}
	return Answer{}, false
}

// looksUpFirst applies the LooksUpFirst hook.
func (s *Server) looksUpFirst() bool {
	if s.hooks.LooksUpFirst != nil {
		return s.hooks.LooksUpFirst()
	}
	return s.gw.LooksUpFirst()
}

// gatewayKey applies the GatewayKey hook.
func (s *Server) gatewayKey(j Job) string {
	if s.hooks.GatewayKey == nil {
		return j.RequestID
	}
	return s.hooks.GatewayKey(j)
}

// Release records an attempt whose gateway outcome is unknown: the key
// moves to needs_recovery under the same request id, its lease expired,
// for the next retry or the sweeper to re-ask the gateway.
func (s *Server) Release(ctx context.Context, j Job) {
	if err := s.store.Release(ctx, j.Tenant, j.KeyHash, j.RequestID, s.cfg.ReplicaID, s.now()); err != nil {
		s.log.Warn("release after indeterminate gateway answer", append(j.logAttrs(), "err", err)...)
	}
}

// sweepStale resolves a key the sweeper leased: by default it re-sends
// the recorded request id.
func (s *Server) sweepStale(ctx context.Context, rec *Record) OutcomeKind {
	if s.hooks.SweepStale != nil {
		return s.hooks.SweepStale(ctx, rec)
	}
	return s.recoverKey(ctx, rec, "sweeper").kind
}
