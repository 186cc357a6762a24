package zoo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// dbTimeout bounds one store statement detached from the client.
const dbTimeout = 10 * time.Second

// maxLoops bounds the re-reads of one request's key.
const maxLoops = 64

// base is the claim flow the claim-based variants share: the reference's
// protocol (atomic claim, canonical fingerprint, wait then 409, the same
// gateway request id on takeover, release on an indeterminate answer, a
// sweeper that re-asks the gateway) written against the reference's
// exported pieces. A variant sets one hook; a nil hook is the correct
// behaviour.
type base struct {
	cfg     reference.Config
	store   *reference.Store
	hub     *reference.Hub
	keeper  *reference.Keeper
	gw      *reference.Gateway
	log     *slog.Logger
	replica string

	// scope is the namespace a key is stored under (default: the tenant).
	scope func(req *reference.ChargeRequest) string
	// fingerprint identifies the request (default: the canonical fingerprint).
	fingerprint func(raw []byte, req *reference.ChargeRequest) []byte
	// ignoreBody skips the fingerprint comparison on a known key.
	ignoreBody bool
	// noTakeover: a retry never takes over an expired lease; it waits, then 409.
	noTakeover bool
	// mayTakeOver narrows takeover to some expired leases (default: all).
	mayTakeOver func(rec *reference.Record) bool
	// takeoverID is the gateway request id a takeover sends (default: the recorded one).
	takeoverID func(ctx context.Context, rec *reference.Record) (string, error)
	// indeterminate records an attempt whose outcome is unknown (default: Release).
	indeterminate func(ctx context.Context, j job)
	// stale resolves a key the sweeper leased (default: re-ask the gateway).
	stale func(ctx context.Context, rec *reference.Record)
	// noSweeper disables the background sweeper.
	noSweeper bool
	// alsoSweep is more work for every sweep (an outbox to drain).
	alsoSweep func(ctx context.Context)
}

// job is one gateway attempt for a claimed key.
type job struct {
	scope     string
	keyHash   []byte
	requestID string
	params    reference.ChargeParams
}

func newBase(cfg reference.Config) (*base, error) {
	if cfg.Pool == nil || cfg.Gateway == nil {
		return nil, errors.New("zoo: Config.Pool and Config.Gateway are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.TTL, reference.DefaultTTL)
	def(&cfg.TombstoneTTL, reference.DefaultTombstoneTTL)
	def(&cfg.MaxWait, reference.DefaultMaxWait)
	def(&cfg.Lease, reference.DefaultLease)
	def(&cfg.SweepInterval, reference.DefaultSweepInterval)
	def(&cfg.RecoveryAfter, reference.DefaultRecoveryAfter)
	if cfg.SweepBatch <= 0 {
		cfg.SweepBatch = reference.DefaultSweepBatch
	}
	replica := cfg.ReplicaID
	if replica == "" {
		replica = newID("replica_")
	}
	store := reference.NewStore(cfg.Pool)
	return &base{cfg: cfg, store: store, hub: reference.NewHub(cfg.Pool, cfg.Logger),
		keeper: reference.NewKeeper(store, replica, cfg.Lease, time.Now, cfg.Logger),
		gw:     cfg.Gateway, log: cfg.Logger.With("replica", replica), replica: replica}, nil
}

// Handler serves POST /v1/charges and GET /healthz.
func (b *base) Handler() http.Handler { return chargeMux(b.serveCharge, b.cfg) }

// Ready is closed once the notification listener is up.
func (b *base) Ready() <-chan struct{} { return b.hub.Ready() }

// Run runs the notification listener and the sweeper until ctx ends.
func (b *base) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { b.hub.Run(ctx) })
	if !b.noSweeper && b.cfg.SweepInterval > 0 {
		wg.Go(func() { b.sweepLoop(ctx) })
	}
	wg.Wait()
	return nil
}

func (b *base) serveCharge(w http.ResponseWriter, r *http.Request) {
	raw, req, err := parse(r)
	if req == nil {
		refuse(w, err)
		return
	}
	scope := req.Tenant
	if b.scope != nil {
		scope = b.scope(req)
	}
	fp := req.Fingerprint
	if b.fingerprint != nil {
		fp = b.fingerprint(raw, req)
	}
	if err != nil {
		b.refuseField(r.Context(), w, scope, req.KeyHash, fp, err)
		return
	}
	b.charge(r.Context(), req, scope, fp).write(w)
}

// refuseField answers an invalid body field as the reference does: 422
// when the key is already bound to another body, else the field's 400.
func (b *base) refuseField(ctx context.Context, w http.ResponseWriter, scope string, keyHash, fp []byte, err error) {
	if !b.ignoreBody && errors.Is(err, reference.ErrBadBody) {
		rec, lerr := b.store.Lookup(ctx, scope, keyHash)
		if lerr == nil && !(rec.Terminal() && !time.Now().Before(rec.ForgetAt)) && !bytes.Equal(rec.Fingerprint, fp) {
			mismatch().write(w)
			return
		}
	}
	refuse(w, err)
}

func (b *base) newClaim(req *reference.ChargeRequest, scope string, fp []byte) reference.Claim {
	return reference.Claim{Tenant: scope, KeyHash: req.KeyHash, Key: req.Key, Fingerprint: fp,
		RequestID: newID("req_"), Params: req.Params, Owner: b.replica, Now: time.Now(),
		Lease: b.cfg.Lease, TTL: b.cfg.TTL, Forget: b.cfg.TombstoneTTL}
}

func claimJob(c reference.Claim) job {
	return job{scope: c.Tenant, keyHash: c.KeyHash, requestID: c.RequestID, params: c.Params}
}

func (b *base) charge(ctx context.Context, req *reference.ChargeRequest, scope string, fp []byte) answer {
	claim := b.newClaim(req, scope, fp)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dbTimeout)
	ok, err := b.claim(cctx, claim)
	cancel()
	if err != nil {
		return unavailable(b.log, err)
	}
	if ok {
		return b.attempt(ctx, claimJob(claim))
	}
	return b.await(ctx, req, scope, fp)
}

// await handles a key that exists: replay, refuse, take over, or wait.
func (b *base) await(ctx context.Context, req *reference.ChargeRequest, scope string, fp []byte) answer {
	sub := b.hub.Subscribe(scope, req.KeyHash)
	defer sub.Close()
	deadline := time.Now().Add(b.cfg.MaxWait)
	for range maxLoops {
		rec, err := b.store.Lookup(ctx, scope, req.KeyHash)
		if errors.Is(err, reference.ErrNotFound) {
			if a, done := b.claimAgain(ctx, req, scope, fp, b.claim); done {
				return a
			}
			continue
		}
		if err != nil {
			return unavailable(b.log, err)
		}
		now := time.Now()
		switch {
		case rec.Terminal() && !now.Before(rec.ForgetAt):
			if a, done := b.claimAgain(ctx, req, scope, fp, b.store.Reclaim); done {
				return a
			}
			continue
		case !b.ignoreBody && !bytes.Equal(rec.Fingerprint, fp):
			return mismatch()
		case rec.Terminal():
			return answer{result: &rec.Result, replayed: true}
		case !b.noTakeover && !now.Before(rec.LeaseUntil) && (b.mayTakeOver == nil || b.mayTakeOver(rec)):
			taken, err := b.store.TakeOver(ctx, scope, req.KeyHash, b.replica, now, b.cfg.Lease)
			if err != nil {
				return unavailable(b.log, err)
			}
			if taken != nil {
				return b.recover(ctx, taken)
			}
			continue
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return conflict()
		}
		wait := remaining
		if !b.noTakeover && (b.mayTakeOver == nil || b.mayTakeOver(rec)) {
			wait = min(remaining, time.Until(rec.LeaseUntil))
		}
		if err := waitFor(ctx, sub, wait); err != nil {
			return answer{problem: reference.Problem{Status: http.StatusServiceUnavailable, Detail: "client went away", RetryAfter: time.Second}}
		}
	}
	return unavailable(b.log, errors.New("key changed state too often"))
}

func (b *base) claimAgain(ctx context.Context, req *reference.ChargeRequest, scope string, fp []byte,
	claimFn func(context.Context, reference.Claim) (bool, error)) (answer, bool) {
	claim := b.newClaim(req, scope, fp)
	ok, err := claimFn(ctx, claim)
	if err != nil {
		return unavailable(b.log, err), true
	}
	if !ok {
		return answer{}, false
	}
	return b.attempt(ctx, claimJob(claim)), true
}

// claim inserts a new key's row; false means the key exists (look it up).
func (b *base) claim(ctx context.Context, c reference.Claim) (bool, error) {
	ok, _, err := b.store.Claim(ctx, c)
	return ok, err
}

// recover finishes a key taken over from an owner that vanished.
func (b *base) recover(ctx context.Context, rec *reference.Record) answer {
	id := rec.RequestID
	if b.takeoverID != nil {
		var err error
		if id, err = b.takeoverID(ctx, rec); err != nil {
			return unavailable(b.log, err)
		}
	}
	return b.attempt(ctx, job{scope: rec.Tenant, keyHash: rec.KeyHash, requestID: id, params: rec.Params})
}

// attempt asks the gateway and records the outcome, detached from the client.
func (b *base) attempt(ctx context.Context, j job) answer {
	ctx = context.WithoutCancel(ctx)
	release := b.keeper.Hold(reference.Lease{Tenant: j.scope, KeyHash: j.keyHash, RequestID: j.requestID})
	out := b.gw.Charge(ctx, reference.GatewayRequest{RequestID: j.requestID, ChargeParams: j.params})
	release()
	if !out.Definitive() {
		dctx, cancel := context.WithTimeout(ctx, dbTimeout)
		defer cancel()
		if b.indeterminate != nil {
			b.indeterminate(dctx, j)
		} else if err := b.store.Release(dctx, j.scope, j.keyHash, j.requestID, b.replica, time.Now()); err != nil {
			b.log.Warn("release", "err", err)
		}
		return gatewayUnknown(out)
	}
	res, _ := reference.ResultFor(out, j.params)
	return b.finish(ctx, j, res)
}

func (b *base) finish(ctx context.Context, j job, res reference.Result) answer {
	ctx, cancel := context.WithTimeout(ctx, dbTimeout)
	defer cancel()
	ok, err := b.store.Finish(ctx, j.scope, j.keyHash, j.requestID, res, time.Now())
	if err != nil {
		return unavailable(b.log, err)
	}
	if ok {
		return answer{result: &res}
	}
	rec, err := b.store.Lookup(ctx, j.scope, j.keyHash)
	if err != nil {
		return unavailable(b.log, err)
	}
	if !rec.Terminal() {
		return unavailable(b.log, errors.New("key neither finished nor ours"))
	}
	return answer{result: &rec.Result, replayed: true}
}

func (b *base) sweepLoop(ctx context.Context) {
	reference.Every(ctx, b.cfg.SweepInterval, b.cfg.SweepInterval, func() bool {
		if err := b.sweepOnce(ctx); err != nil && ctx.Err() == nil {
			b.log.Warn("sweep failed", "err", err)
		}
		return true
	})
}

// sweepOnce resolves stale unresolved keys, then expires finished ones.
func (b *base) sweepOnce(ctx context.Context) error {
	recs, err := b.store.LeaseStale(ctx, b.replica, time.Now(), b.cfg.Lease, b.cfg.RecoveryAfter, b.cfg.SweepBatch)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if b.stale != nil {
			b.stale(ctx, rec)
		} else {
			b.recover(ctx, rec)
		}
	}
	if b.alsoSweep != nil {
		b.alsoSweep(ctx)
	}
	_, _, err = b.store.Expire(ctx, time.Now(), b.cfg.SweepBatch)
	return err
}

// parse reads the raw body (kept for variants that look at bytes) and
// parses the request with the reference's validation.
func parse(r *http.Request) ([]byte, *reference.ChargeRequest, error) {
	var raw []byte
	if r.Body != nil {
		var err error
		raw, err = io.ReadAll(io.LimitReader(r.Body, reference.MaxBodyBytes+1))
		if err != nil {
			return nil, nil, &reference.RequestError{Status: http.StatusBadRequest, Field: "body", Detail: "could not be read", Kind: reference.ErrBadBody}
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
	}
	req, err := reference.ParseCharge(r)
	return raw, req, err
}

// answer is a stored result (maybe replayed) or a problem.
type answer struct {
	result   *reference.Result
	replayed bool
	problem  reference.Problem
}

func (a answer) write(w http.ResponseWriter) {
	if a.result != nil {
		reference.WriteResult(w, *a.result, a.replayed)
		return
	}
	reference.WriteProblem(w, a.problem)
}

func refuse(w http.ResponseWriter, err error) {
	var re *reference.RequestError
	if !errors.As(err, &re) {
		re = &reference.RequestError{Status: http.StatusBadRequest, Detail: err.Error()}
	}
	reference.WriteProblem(w, reference.ProblemFor(re))
}

func mismatch() answer {
	return answer{problem: reference.Problem{Status: http.StatusUnprocessableEntity, Title: "Idempotency-Key reused",
		Detail: "this Idempotency-Key was first used with a different request", Field: "Idempotency-Key"}}
}

func conflict() answer {
	return answer{problem: reference.Problem{Status: http.StatusConflict, Title: "Request in progress",
		Detail: "another request with this Idempotency-Key is in progress; retry later", RetryAfter: time.Second}}
}

func gatewayUnknown(out reference.Outcome) answer {
	p := reference.Problem{Status: http.StatusBadGateway, Title: "Payment gateway outcome unknown", RetryAfter: time.Second,
		Detail: "the payment gateway did not give a definitive answer; retry with the same Idempotency-Key"}
	if out.Timeout {
		p.Status = http.StatusGatewayTimeout
	}
	return answer{problem: p}
}

func unavailable(log *slog.Logger, err error) answer {
	log.Error("database unavailable", "err", err)
	return answer{problem: reference.Problem{Status: http.StatusServiceUnavailable, Title: "Temporarily unavailable",
		Detail: "the request could not be recorded; retry with the same Idempotency-Key", RetryAfter: time.Second}}
}

// waitFor blocks until the key is notified, d passes, or ctx ends.
func waitFor(ctx context.Context, sub *reference.Subscription, d time.Duration) error {
	t := time.NewTimer(max(d, time.Millisecond))
	defer t.Stop()
	select {
	case <-sub.C:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// chargeMux routes the charge endpoint and a health check.
func chargeMux(charge http.HandlerFunc, cfg reference.Config) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/charges", charge)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := cfg.Pool.Ping(ctx); err != nil {
			http.Error(w, `{"status":"database unreachable"}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`)
	})
	return mux
}

// newID returns prefix + 128 random bits in hex.
func newID(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
