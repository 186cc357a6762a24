package reference

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// maxLoops bounds the re-reads of one request's key. An iteration follows a
// wake-up, a lost takeover or a vanished row; a waiter normally needs a
// handful, so reaching the bound means pathological churn on one key.
const maxLoops = 64

// retryAfter is the Retry-After of every retryable answer.
const retryAfter = time.Second

// Answer is what one charge request is told: a definitive result (stored,
// maybe replayed) or a problem (refusal or retryable).
type Answer struct {
	Result   *Result
	Replayed bool
	Problem  Problem
}

// Write sends the answer.
func (a Answer) Write(w http.ResponseWriter) {
	if a.Result != nil {
		WriteResult(w, *a.Result, a.Replayed)
		return
	}
	WriteProblem(w, a.Problem)
}

// Job is one gateway attempt for a claim.
type Job struct {
	Tenant    string
	KeyHash   []byte
	RequestID string
	Params    ChargeParams
	By        string    // "owner", "retry" (takeover by a request), "sweeper"
	CreatedAt time.Time // the claim's time
}

func (j Job) logAttrs() []any {
	return []any{"tenant", j.Tenant, "key_hash", fmt.Sprintf("%x", j.KeyHash[:8]), "request_id", j.RequestID,
		"order_id", j.Params.OrderID, "by", j.By}
}

func (s *Server) serveCharge(w http.ResponseWriter, r *http.Request) {
	req, err := ParseCharge(r)
	s.adjust(req)
	if err != nil {
		s.refuse(r.Context(), req, err).Write(w)
		return
	}
	s.charge(r.Context(), req).Write(w)
}

// refuse answers client input that failed validation. A body whose fields
// are invalid under a key already bound to another request is a 422, the
// more useful answer: the client reused a key.
func (s *Server) refuse(ctx context.Context, req *ChargeRequest, err error) Answer {
	var re *RequestError
	if !errors.As(err, &re) {
		re = &RequestError{Status: http.StatusBadRequest, Detail: err.Error()}
	}
	if req != nil && isFieldError(err) {
		rec, lerr := s.store.Lookup(ctx, req.Tenant, req.KeyHash)
		if lerr == nil && !s.forgotten(rec) && !bytes.Equal(rec.Fingerprint, req.Fingerprint) {
			return s.Mismatch()
		}
	}
	s.m.Rejected.WithLabelValues(strconv.Itoa(re.Status)).Inc()
	return Answer{Problem: ProblemFor(re)}
}

// charge is the protocol for a valid request: claim the key, or find out
// what happened to it.
func (s *Server) charge(ctx context.Context, req *ChargeRequest) Answer {
	if s.hooks.Charge != nil {
		return s.hooks.Charge(ctx, req)
	}
	claim := s.newClaim(req)
	// From the claim on, the work is not the client's to cancel: a claim
	// committed under a hang-up would otherwise wait for recovery.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dbTimeout)
	ok, existing, err := s.store.Claim(cctx, claim)
	cancel()
	if err != nil {
		return s.Unavailable(err)
	}
	if ok {
		s.m.Claims.Inc()
		if r := s.attempt(ctx, claimJob(claim)); !r.lost {
			return r.Answer
		}
		return s.await(ctx, req, nil)
	}
	return s.await(ctx, req, existing)
}

func (s *Server) newClaim(req *ChargeRequest) Claim {
	return Claim{Tenant: req.Tenant, KeyHash: req.KeyHash, Key: req.Key, Fingerprint: req.Fingerprint,
		RequestID: NewID("req_"), Params: req.Params, Owner: s.cfg.ReplicaID, Now: s.now(),
		Lease: s.cfg.Lease, TTL: s.cfg.TTL, Forget: s.cfg.TombstoneTTL}
}

func claimJob(c Claim) Job {
	return Job{Tenant: c.Tenant, KeyHash: c.KeyHash, RequestID: c.RequestID, Params: c.Params, By: "owner", CreatedAt: c.Now}
}

// forgotten reports whether a finished key is past its dedupe window.
func (s *Server) forgotten(rec *Record) bool { return rec.Terminal() && !s.now().Before(rec.ForgetAt) }

// await handles a key that already exists: replay its result, refuse a
// different request, take over an abandoned claim, or wait for the owner,
// woken by the hub, up to MaxWait.
//
// rec is the row as the claim saw it, or nil to read it first.
func (s *Server) await(ctx context.Context, req *ChargeRequest, rec *Record) Answer {
	var sub *Subscription
	defer func() {
		if sub != nil {
			sub.Close()
		}
	}()
	deadline := time.Now().Add(s.cfg.MaxWait)
	var waitStart time.Time
	defer func() {
		if !waitStart.IsZero() {
			s.m.WaitSeconds.Observe(time.Since(waitStart).Seconds())
		}
	}()
	for range maxLoops {
		if rec == nil {
			var err error
			rec, err = s.store.Lookup(ctx, req.Tenant, req.KeyHash)
			if errors.Is(err, ErrNotFound) { // forgotten and deleted since our claim conflicted
				if a, done := s.claimVanished(ctx, req); done {
					return a
				}
				continue
			}
			if err != nil {
				return s.Unavailable(err)
			}
		}
		now := s.now()
		switch {
		case s.forgotten(rec):
			if a, done := s.claimAgain(ctx, req, s.reclaim); done {
				return a
			}
			rec = nil
			continue
		case !bytes.Equal(rec.Fingerprint, req.Fingerprint):
			return s.Mismatch()
		case rec.Terminal():
			s.m.Replays.Inc()
			return Answer{Result: &rec.Result, Replayed: true}
		case !now.Before(rec.LeaseUntil) && s.mayTakeOver(rec):
			taken, err := s.store.TakeOver(ctx, req.Tenant, req.KeyHash, s.cfg.ReplicaID, now, s.cfg.Lease)
			if err != nil {
				return s.Unavailable(err)
			}
			if taken != nil {
				return s.recoverKey(ctx, taken, "retry").Answer
			}
			rec = nil
			continue
		}
		remaining := time.Until(deadline)
		if remaining > 0 && sub == nil {
			// Subscribe, then register as a waiter so the owner notifies:
			// any finish after the registration reaches the subscription.
			// The row as registered is judged afresh; nil (resolved
			// meanwhile) is read again.
			sub = s.hub.Subscribe(req.Tenant, req.KeyHash)
			registered, err := s.store.Register(ctx, req.Tenant, req.KeyHash)
			if err != nil {
				return s.Unavailable(err)
			}
			rec = registered
			continue
		}
		if remaining <= 0 {
			return s.Conflict()
		}
		if waitStart.IsZero() {
			waitStart = time.Now()
			s.m.Waits.Inc()
		}
		n, err := waitFor(ctx, sub, s.wakeIn(rec, now, remaining))
		if err != nil {
			return Answer{Problem: Problem{Status: http.StatusServiceUnavailable, Detail: "client went away", RetryAfter: retryAfter}}
		}
		if n.Result != nil && n.RequestID == rec.RequestID { // the owner's result, straight from the notification
			s.m.Replays.Inc()
			return Answer{Result: n.Result, Replayed: true}
		}
		rec = nil
	}
	return s.Unavailable(errors.New("key changed state too often"))
}

// wakeIn is how long a waiter sleeps at most: what is left of MaxWait, or
// less, until the lease runs out, when it may take the key over then.
func (s *Server) wakeIn(rec *Record, now time.Time, remaining time.Duration) time.Duration {
	if !s.mayTakeOver(rec) {
		return remaining
	}
	return min(remaining, rec.LeaseUntil.Sub(now))
}

// claimOnly is Store.Claim without the row it may return.
func (s *Server) claimOnly(ctx context.Context, c Claim) (bool, error) {
	ok, _, err := s.store.Claim(ctx, c)
	return ok, err
}

// claimAgain claims a key that vanished or was forgotten while we looked.
// A claimFn that finds the key gone (ErrNotFound: a Reclaim hook whose
// sweep deleted it) claims it as a key that vanished.
func (s *Server) claimAgain(ctx context.Context, req *ChargeRequest, claimFn func(context.Context, Claim) (bool, error)) (Answer, bool) {
	claim := s.newClaim(req)
	ok, err := claimFn(ctx, claim)
	if errors.Is(err, ErrNotFound) {
		return s.claimVanished(ctx, req)
	}
	if err != nil {
		return s.Unavailable(err), true
	}
	if !ok {
		return Answer{}, false
	}
	s.m.Claims.Inc()
	r := s.attempt(ctx, claimJob(claim))
	if r.lost {
		return Answer{}, false
	}
	return r.Answer, true
}

// claimVanished claims a key deleted since our claim conflicted. When
// another request re-created it first, the key is read again (done
// false), unless the LostReclaim hook answers.
func (s *Server) claimVanished(ctx context.Context, req *ChargeRequest) (Answer, bool) {
	if a, done := s.claimAgain(ctx, req, s.claimOnly); done {
		return a, true
	}
	return s.lostReclaim(req)
}

// waitFor blocks until the key is notified, d passes, or ctx ends.
func waitFor(ctx context.Context, sub *Subscription, d time.Duration) (Notice, error) {
	t := time.NewTimer(max(d, time.Millisecond))
	defer t.Stop()
	select {
	case n := <-sub.C:
		return n, nil
	case <-t.C:
		return Notice{}, nil
	case <-ctx.Done():
		return Notice{}, ctx.Err()
	}
}

// recoverKey finishes a key taken over from an owner that vanished or gave
// up: it re-sends the recorded request id with the recorded parameters.
func (s *Server) recoverKey(ctx context.Context, rec *Record, by string) attemptResult {
	id, err := s.takeoverID(ctx, rec)
	if err != nil {
		return attemptResult{Answer: s.Unavailable(err), kind: Indeterminate}
	}
	j := Job{Tenant: rec.Tenant, KeyHash: rec.KeyHash, RequestID: id, Params: rec.Params,
		By: by, CreatedAt: rec.CreatedAt}
	res := s.attempt(ctx, j)
	s.m.Recoveries.WithLabelValues(by, res.kind.String()).Inc()
	s.log.Info("key recovered", append(j.logAttrs(), "outcome", res.kind.String(), "attempts", rec.Attempts)...)
	return res
}

type attemptResult struct {
	Answer
	kind OutcomeKind
	// lost: the owner's claim was taken over before its gateway call, and
	// nothing was sent; the caller waits for the key like a duplicate.
	lost bool
}

// attempt asks the gateway about one claim and records the outcome. It is
// detached from the client's context: once money may move, the answer is
// stored even if the client hangs up.
func (s *Server) attempt(ctx context.Context, j Job) attemptResult {
	ctx = context.WithoutCancel(ctx)
	l := Lease{Tenant: j.Tenant, KeyHash: j.KeyHash, RequestID: j.RequestID, Granted: j.CreatedAt}
	if j.By == "owner" {
		var held bool
		if l, held = s.confirmClaim(ctx, l); !held {
			s.log.Warn("claim taken over before its gateway call; not sending it", j.logAttrs()...)
			return attemptResult{kind: Indeterminate, lost: true}
		}
	}
	release := s.keeper.Hold(l)
	out := s.ask(ctx, j)
	release()
	if !out.Definitive() {
		dctx, cancel := context.WithTimeout(ctx, dbTimeout)
		defer cancel()
		s.indeterminate(dctx, j)
		s.log.Warn("gateway outcome indeterminate; key left unresolved",
			append(j.logAttrs(), "status", out.Status, "err", out.Err)...)
		return attemptResult{Answer: UnknownOutcome(out), kind: out.Kind}
	}
	res, _ := ResultFor(out, j.Params)
	a := s.finish(ctx, j, res)
	s.finished(ctx, j, res, a)
	return attemptResult{Answer: a, kind: out.Kind}
}

// confirmClaim makes sure an owner's claim that came back late is still
// its own before the request is sent. The claim's lease was stamped before
// its statement waited for a connection and ran, and the keeper holds it
// only from now on: a claim slower than its lease comes back already run
// out, and a sweeper may have taken the key over meanwhile. A claim younger
// than a renewal period is left to the keeper. A renewal that fails (the
// database unreachable) keeps the claim, as the keeper does.
func (s *Server) confirmClaim(ctx context.Context, l Lease) (Lease, bool) {
	now := s.now()
	if now.Sub(l.Granted) < s.keeper.every {
		return l, true
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Lease)
	defer cancel()
	held, err := s.store.RenewLeases(ctx, s.cfg.ReplicaID, []Lease{l}, now, s.cfg.Lease)
	if err != nil {
		return l, true
	}
	l.Granted = now
	return l, held[l.ID()]
}

// finish stores a definitive result; if someone else finished the key
// first (a takeover that asked the gateway about the same id), their stored
// result is the answer.
func (s *Server) finish(ctx context.Context, j Job, res Result) Answer {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	ok, err := s.store.Finish(ctx, j.Tenant, j.KeyHash, j.RequestID, res, s.now())
	if err != nil {
		// The key stays claimed; recovery will re-ask the gateway under the
		// same id and store this same decision.
		return s.Unavailable(err)
	}
	if ok {
		return Answer{Result: &res}
	}
	rec, err := s.store.Lookup(ctx, j.Tenant, j.KeyHash)
	if err != nil {
		return s.Unavailable(err)
	}
	if !rec.Terminal() {
		return s.Unavailable(errors.New("key neither finished nor ours"))
	}
	return Answer{Result: &rec.Result, Replayed: true}
}

// ask sends the claim's request to the gateway. A re-send is first looked
// up when it would not be deduplicated: for a claim older than the
// gateway's idempotency window, and always on a provider that keeps no
// result after a 5xx (Checkout.com: the same key would pay again). A
// provider without a lookup (Adyen) keeps its keys' results: the re-send
// learns the outcome.
func (s *Server) ask(ctx context.Context, j Job) Outcome {
	if j.By != "owner" && (s.looksUpFirst() || s.now().Sub(j.CreatedAt) >= s.cfg.GatewayKeyWindow) {
		c, err := s.gw.FindCharge(ctx, j.Params.OrderID, j.RequestID)
		switch {
		case errors.Is(err, errNoLookup):
		case err != nil:
			return Outcome{Err: err}
		case c != nil && c.Status == "succeeded":
			return Outcome{Kind: Charged, Status: http.StatusOK, Charge: c}
		case c != nil:
			return Outcome{Kind: Declined, Status: http.StatusPaymentRequired, Error: &GatewayError{Charge: c.ID}}
		}
	}
	start := time.Now()
	key := s.gatewayKey(j)
	out := s.gw.Charge(ctx, GatewayRequest{RequestID: j.RequestID, Key: key, NoKey: key == "", ChargeParams: j.Params})
	s.m.GatewaySeconds.Observe(time.Since(start).Seconds())
	s.m.GatewayCalls.WithLabelValues(out.Kind.String()).Inc()
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.log.Debug("gateway call", append(j.logAttrs(), "outcome", out.Kind.String(), "status", out.Status)...)
	}
	return out
}

// Conflict is the answer to a duplicate whose key stays in flight past
// MaxWait: 409 with Retry-After.
func (s *Server) Conflict() Answer {
	s.m.Conflicts.Inc()
	return Answer{Problem: Problem{Status: http.StatusConflict, Title: "Request in progress",
		Detail: "another request with this Idempotency-Key is in progress; retry later", RetryAfter: retryAfter}}
}

// UnknownOutcome is the answer to an attempt whose gateway outcome is
// unknown: 504 after a gateway timeout, else 502, with Retry-After.
func UnknownOutcome(out Outcome) Answer {
	p := Problem{Status: http.StatusBadGateway, Title: "Payment gateway outcome unknown", RetryAfter: retryAfter,
		Detail: "the payment gateway did not give a definitive answer; retry with the same Idempotency-Key"}
	if out.Timeout {
		p.Status = http.StatusGatewayTimeout
	}
	return Answer{Problem: p}
}

// Mismatch is the answer to a key reused with another request: 422.
func (s *Server) Mismatch() Answer {
	s.m.Mismatches.Inc()
	return Answer{Problem: Problem{Status: http.StatusUnprocessableEntity, Title: "Idempotency-Key reused",
		Detail: "this Idempotency-Key was first used with a different request", Field: "Idempotency-Key"}}
}

// Unavailable is the answer when the database failed: 503 with
// Retry-After.
func (s *Server) Unavailable(err error) Answer {
	s.m.Unavailable.Inc()
	s.log.Error("database unavailable", "err", err)
	return Answer{Problem: Problem{Status: http.StatusServiceUnavailable, Title: "Temporarily unavailable",
		Detail: "the request could not be recorded; retry with the same Idempotency-Key", RetryAfter: retryAfter}}
}
