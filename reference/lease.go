package reference

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Renew extends owner's lease on an unresolved key it holds under
// requestID to now+lease (never shortening it). It reports false when the
// key is no longer owner's (taken over, released, finished).
func (s *Store) Renew(ctx context.Context, tenant string, keyHash []byte, requestID, owner string, now time.Time, lease time.Duration) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
		UPDATE idempotency_keys SET lease_until = GREATEST(lease_until, $5)
		WHERE tenant = $1 AND key_hash = $2 AND request_id = $3 AND lease_owner = $4
			AND state IN ('in_progress', 'needs_recovery')`,
		tenant, keyHash, requestID, owner, now.Add(lease))
	if err != nil {
		return false, fmt.Errorf("renew lease: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Lease is a claim's lease held while its gateway call runs.
type Lease struct {
	Store     *Store
	Tenant    string
	KeyHash   []byte
	RequestID string
	Owner     string
	Length    time.Duration
	// Granted is when the lease was last set (the claim); zero: when Hold
	// starts. The first renewal is due a third of a lease after it, at
	// once if that has passed (an owner slow between its claim and its
	// gateway call, a takeover of an old claim).
	Granted time.Time
	Now     func() time.Time
	Log     *slog.Logger
}

// Hold renews the lease every third of its length until stop is called:
// a live owner is never taken over however long the gateway takes, while
// a dead owner's key is free for recovery one lease after its last
// renewal, whatever the gateway timeout. A renewal that fails (the
// database unreachable) is retried at the next tick; the call goes on,
// since a takeover re-sends the same request id and the gateway's
// idempotency keeps both askers to one charge. Holding stops at once when
// the key is no longer the owner's.
func (l Lease) Hold(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	every := max(l.Length/3, time.Millisecond)
	first := every
	if !l.Granted.IsZero() {
		first -= l.Now().Sub(l.Granted)
	}
	renew := func() bool {
		rctx, rcancel := context.WithTimeout(ctx, l.Length)
		defer rcancel()
		held, err := l.Store.Renew(rctx, l.Tenant, l.KeyHash, l.RequestID, l.Owner, l.Now(), l.Length)
		if err != nil && ctx.Err() == nil {
			l.Log.Warn("lease renewal failed", "request_id", l.RequestID, "err", err)
		}
		return err != nil || held
	}
	go func() {
		defer close(done)
		Every(ctx, first, every, renew)
	}()
	return func() { cancel(); <-done }
}
