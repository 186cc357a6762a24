package zoo

import (
	"context"
	"time"

	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/redisstore"
)

// redisShortLock holds a key in flight with a Redis lock that expires on
// its own: the in-progress record's TTL is lockTTL, shorter than a slow
// gateway call, and nothing extends it while the call runs (the lease
// kept in the record is renewed, the key's TTL is not). When it lapses the
// key is gone: the next duplicate claims it as a fresh request and charges
// under a new gateway request id. A finished key is kept for the whole
// dedupe window, as the reference keeps it.
//
// Incident: a lock with a fixed short TTL lets a retry take the key while
// a slower charge is still running, and charge again
// (KanishJebaMathewM/Truxify#5846: a 10s lock before a 60s handler); M1,
// found by concurrent-duplicates when a gateway call outlasts the lock.
var redisShortLock = Variant{
	Name: "redis-short-lock",
	Bug:  "the in-progress key is a Redis lock with a 500ms TTL that is never renewed; a slower gateway call outlives it",
	New: func(cfg reference.Config) (Server, error) {
		rs, err := redisstore.From(cfg.Store)
		if err != nil {
			return nil, err
		}
		lock := &shortLock{Store: rs}
		cfg.Store = lock
		s, err := reference.New(cfg)
		if err != nil {
			return nil, err
		}
		lock.keep = max(s.Config().TTL, s.Config().TombstoneTTL)
		return s, nil
	},
}

// lockTTL is the lock's TTL: under the built-ins' longest drawn gateway
// latency (families.MaxGatewayLatency, 1.5s).
const lockTTL = 500 * time.Millisecond

// shortLock is the Redis store with the claim's TTL cut to lockTTL.
type shortLock struct {
	*redisstore.Store
	keep time.Duration // a finished key's TTL
}

// Claim claims as the Redis store does, then sets the lock's TTL: the bug.
func (l *shortLock) Claim(ctx context.Context, c reference.Claim) (bool, *reference.Record, error) {
	ok, existing, err := l.Store.Claim(ctx, c)
	if ok && err == nil {
		err = l.Client().PExpire(ctx, redisstore.RecordKey(c.Tenant, c.KeyHash), lockTTL).Err()
	}
	return ok, existing, err
}

// Finish stores the result as the Redis store does, then keeps it for the
// dedupe window (the response outlives the lock).
func (l *shortLock) Finish(ctx context.Context, tenant string, keyHash []byte, requestID string, res reference.Result, now time.Time) (bool, error) {
	ok, err := l.Store.Finish(ctx, tenant, keyHash, requestID, res, now)
	if ok && err == nil {
		err = l.Client().PExpire(ctx, redisstore.RecordKey(tenant, keyHash), l.keep).Err()
	}
	return ok, err
}
