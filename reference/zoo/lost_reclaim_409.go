package zoo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// lostReclaim409 keeps a key for its dedupe window and deletes it once a
// request meets it past that window: such a request hands the key to the
// retention sweep, which gathers the keys met within sweepBatch and
// deletes every key past its window in one statement, and then reads the
// key back. The row is gone, swept between the claim that conflicted and
// the read, so the request claims the key again, as it should. But when
// that re-claim loses, to a concurrent request that re-created the key in
// the same instant (one the same sweep let go), it answers 409 "in
// progress" at once, without reading what the winner left: an owner in
// flight that it should wait for, or a different request it should
// refuse with 422.
//
// Incident (margince/margince#423): the claim transaction's arm for a row
// the retention sweep deleted between the INSERT that conflicted and the
// FOR UPDATE read re-claimed the key, and when the re-claim lost, the
// outcome was hardcoded to "a request with this idempotency key is still
// in progress", whatever the rival's row held (R3: a duplicate told 409
// at once while the owner is in flight; found by late-retry's concurrent
// duplicates past the promise, which meet the sweep of their key).
var lostReclaim409 = Variant{
	Name: "lost-reclaim-409",
	Bug:  "sweeps a key a request meets past its window, then reads it back; a request whose key vanished re-claims it, and when that re-claim loses answers 409 in progress at once, without reading what the winner left",
	New: withoutSweeper(func(cfg reference.Config) (Server, error) {
		if cfg.Pool == nil {
			return nil, errors.New("lost-reclaim-409 sweeps its keys in PostgreSQL (--store=postgres)")
		}
		return hooked(func(s *reference.Server) reference.Hooks {
			sweep := &retentionSweep{s: s}
			return reference.Hooks{
				Reclaim: func(ctx context.Context, c reference.Claim) (bool, error) {
					if err := sweep.await(ctx, c.Now); err != nil {
						return false, err
					}
					return false, reference.ErrNotFound // read back: swept
				},
				LostReclaim: func(*reference.ChargeRequest) (reference.Answer, bool) { return s.Conflict(), true },
			}
		})(cfg)
	}),
}

// sweepBatch is how long lost-reclaim-409's retention sweep gathers the
// keys requests met past their window before it deletes them.
const sweepBatch = 100 * time.Millisecond

// retentionSweep is lost-reclaim-409's retention sweep: rounds started by the
// first request that meets a key past its window, each deleting, after
// sweepBatch, every key past its window, and letting go every request
// that waits for it at once.
type retentionSweep struct {
	s    *reference.Server
	mu   sync.Mutex
	next *sweepRound // the round gathering requests, nil between rounds
}

// sweepRound is one round of the sweep: the requests waiting for it,
// each let go (its channel closed) once the round has run, err set
// before.
type sweepRound struct {
	now     time.Time       // the latest time a request met a key past its window
	waiting []chan struct{} // in the order the requests came
	err     error
}

// await hands the sweep a key met past its window at now, and returns
// once the round that deletes it has run.
func (r *retentionSweep) await(ctx context.Context, now time.Time) error {
	r.mu.Lock()
	round := r.next
	if round == nil {
		round = &sweepRound{}
		r.next = round
		time.AfterFunc(sweepBatch, func() { r.run(round) })
	}
	if now.After(round.now) {
		round.now = now
	}
	done := make(chan struct{})
	round.waiting = append(round.waiting, done)
	r.mu.Unlock()
	select {
	case <-done:
		return round.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run deletes every finished key whose dedupe window has passed by the
// round's time, in one statement, and lets the round's requests go, the
// first one first.
func (r *retentionSweep) run(round *sweepRound) {
	r.mu.Lock()
	r.next = nil
	now, waiting := round.now, round.waiting
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.s.Config().Pool.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE state IN ('succeeded', 'failed') AND forget_at <= $1`, now); err != nil {
		round.err = fmt.Errorf("retention sweep: %w", err)
	}
	for _, done := range waiting {
		close(done)
	}
}
