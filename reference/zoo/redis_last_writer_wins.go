package zoo

import (
	"bytes"
	"context"
	"time"

	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/redisstore"
)

// redisLastWriterWins is check-then-act on Redis (redis-get-set) whose
// final write overwrites: GET the key; when it is absent, charge under a
// fresh request id, then SET the response without NX. Duplicates in
// flight together all miss the GET and all charge; each then stores its
// own answer over the one before, so the key ends up bound to the charge
// that finished last, not to the one the first client was told.
// (naive.go and redis-get-set store first-writer-wins: the later INSERT
// or SET NX loses.)
//
// Incident: jcagarcia/grape-idempotency#3: two requests with one key run
// in parallel, both find nothing, both run, and the last SET (nx: false)
// replaces the first request's record, so a retry of the first request
// no longer gets its own answer. Concurrent duplicates both charge (M1,
// found by concurrent-duplicates), and the key's answers name two charges
// (M4). mitos-run/mitos#240 is the same mechanism in process memory: a
// lookup under a read lock, the create outside it, and the key bound to
// whichever resource was recorded last.
var redisLastWriterWins = Variant{
	Name: "redis-last-writer-wins",
	Bug:  "check-then-act on Redis whose SET overwrites: the last duplicate to finish rebinds the key to its own charge",
	New:  overwritingOnRedis(overwriting{}),
}

// overwriting is check-then-act on Redis where every record is written
// as a SET without NX: whatever the key holds is replaced. The claim
// races (redis-setex-claim, redis-read-back-lock) also write an
// in-progress record before the charge.
type overwriting struct {
	checkThenAct
	rs *redisstore.Store
	// inFlight writes an in-progress record before the gateway call (the
	// claim, without NX).
	inFlight bool
	// readBack then reads the key back and charges only when the record
	// there has this request's fingerprint.
	readBack bool
}

// overwritingOnRedis builds the flow o on the Redis store, with no
// sweeper; it refuses any other store.
func overwritingOnRedis(o overwriting) func(reference.Config) (Server, error) {
	return withoutSweeper(func(cfg reference.Config) (Server, error) {
		rs, err := redisstore.From(cfg.Store)
		if err != nil {
			return nil, err
		}
		s, err := reference.New(cfg)
		if err != nil {
			return nil, err
		}
		o.checkThenAct, o.rs = checkThenAct{s: s}, rs
		s.SetHooks(reference.Hooks{Charge: o.charge})
		return s, nil
	})
}

func (o overwriting) charge(ctx context.Context, req *reference.ChargeRequest) reference.Answer {
	ctx = context.WithoutCancel(ctx)
	if a, found := o.found(ctx, req, replay); found {
		return a
	}
	c := claimOf(o.s, req, reference.NewID("req_"))
	if o.inFlight {
		if err := o.put(ctx, c, nil); err != nil {
			return o.s.Unavailable(err)
		}
		if o.readBack && !o.ours(ctx, req) {
			return o.s.Conflict()
		}
	}
	out := o.s.Config().Gateway.Charge(ctx, reference.GatewayRequest{RequestID: c.RequestID, ChargeParams: req.Params})
	if !out.Definitive() {
		// The libraries delete the key on an answer that is not a
		// success, so that the client's retry runs afresh.
		if o.inFlight {
			o.rs.Client().Del(ctx, redisstore.RecordKey(c.Tenant, c.KeyHash))
		}
		return reference.UnknownOutcome(out)
	}
	res, _ := reference.ResultFor(out, req.Params)
	if err := o.put(ctx, c, &res); err != nil {
		o.s.Config().Logger.Warn("store response", "err", err)
	}
	return reference.Answer{Result: &res}
}

// put writes c's record, finished with res when res is set, over
// whatever the key holds: DEL, then the store's claim (SET NX) and
// finish, which together are one SET without NX. The steps are not
// atomic; the bug needs no help.
func (o overwriting) put(ctx context.Context, c reference.Claim, res *reference.Result) error {
	if err := o.rs.Client().Del(ctx, redisstore.RecordKey(c.Tenant, c.KeyHash)).Err(); err != nil {
		return err
	}
	if _, _, err := o.rs.Claim(ctx, c); err != nil || res == nil {
		return err
	}
	_, err := o.rs.Finish(ctx, c.Tenant, c.KeyHash, c.RequestID, *res, time.Now())
	return err
}

// ours reads the key back: is the record there of a request with req's
// fingerprint? Every duplicate of req has that fingerprint.
func (o overwriting) ours(ctx context.Context, req *reference.ChargeRequest) bool {
	rec, err := o.rs.Lookup(ctx, req.Tenant, req.KeyHash)
	return err == nil && bytes.Equal(rec.Fingerprint, req.Fingerprint)
}
