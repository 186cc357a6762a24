package reference

import (
	"context"
	"sync"
	"time"
)

// sweepParallelism bounds the concurrent gateway calls of one sweep.
const sweepParallelism = 8

// maxExpiryBatches bounds the expiry batches of one sweep, so one sweep
// never runs long; a backlog drains over the following sweeps.
const maxExpiryBatches = 10

// SweepStats is what one sweep did.
type SweepStats struct {
	Recovered     int   // keys leased for recovery
	Charged       int   // … finished as succeeded
	Failed        int   // … finished as failed (declined, rejected)
	Indeterminate int   // … still unknown, released for the next try
	Compacted     int64 // finished keys turned into tombstones (TTL passed)
	Forgotten     int64 // tombstones deleted (tombstone TTL passed)
}

// SweepOnce runs one sweep: it recovers unresolved keys whose owner's lease
// ran out more than RecoveryAfter after their claim, by re-sending their
// recorded request id (moving them through needs_recovery to succeeded or
// failed), then expires finished keys in batches. Replicas sweep
// concurrently without contention: rows are leased with SKIP LOCKED.
func (s *Server) SweepOnce(ctx context.Context) (SweepStats, error) {
	var st SweepStats
	recs, err := s.store.LeaseStale(ctx, s.cfg.ReplicaID, s.now(), s.cfg.Lease, s.cfg.RecoveryAfter, s.cfg.SweepBatch)
	if err != nil {
		return st, err
	}
	st.Recovered = len(recs)
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, sweepParallelism)
	for _, rec := range recs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			kind := s.sweepStale(ctx, rec)
			mu.Lock()
			defer mu.Unlock()
			switch kind {
			case Charged:
				st.Charged++
			case Declined, Rejected:
				st.Failed++
			default:
				st.Indeterminate++
			}
		})
	}
	wg.Wait()
	if s.hooks.Sweep != nil {
		s.hooks.Sweep(ctx)
	}
	for range maxExpiryBatches {
		c, f, err := s.store.Expire(ctx, s.now(), s.cfg.SweepBatch)
		st.Compacted += c
		st.Forgotten += f
		if err != nil {
			return st, err
		}
		if c < int64(s.cfg.SweepBatch) && f < int64(s.cfg.SweepBatch) {
			break
		}
	}
	s.m.Expired.WithLabelValues("compacted").Add(float64(st.Compacted))
	s.m.Expired.WithLabelValues("forgotten").Add(float64(st.Forgotten))
	return st, nil
}

func (s *Server) sweepLoop(ctx context.Context) {
	repeat(ctx, s.cfg.SweepInterval, s.cfg.SweepInterval, func() bool {
		s.alignClock(ctx)
		st, err := s.SweepOnce(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("sweep failed", "err", err)
		}
		if st != (SweepStats{}) {
			s.log.Info("sweep", "recovered", st.Recovered, "charged", st.Charged, "failed", st.Failed,
				"indeterminate", st.Indeterminate, "compacted", st.Compacted, "forgotten", st.Forgotten)
		}
		return true
	})
}

// repeat calls fn after first (at once if it is not positive), then every
// interval, until ctx ends or fn returns false.
func repeat(ctx context.Context, first, interval time.Duration, fn func() bool) {
	if first > 0 {
		t := time.NewTimer(first)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	if ctx.Err() != nil || !fn() {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !fn() {
			return
		}
	}
}
