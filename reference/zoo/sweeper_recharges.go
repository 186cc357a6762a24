package zoo

import (
	"context"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// sweeperRecharges re-drives payments from an outbox: every gateway call
// that ended indeterminate (a 5xx, a dropped connection) is queued, and a
// background worker re-sends it after the recovery delay under a fresh
// gateway request id, without asking whether a client retry has resolved
// the key meanwhile. The outbox is never cleared by a takeover.
//
// Incident: the gateway charged and then failed its answer; the client's
// retry recovered the charge (one charge, answered); a few seconds later
// the outbox worker charged the order again, after the client's last
// answer (M1, found by the reconciliation of the gateway's whole ledger
// when the example was already judged).
var sweeperRecharges = Variant{
	Name: "sweeper-recharges",
	Bug:  "an outbox worker re-sends indeterminate charges under a new gateway key, even after a retry resolved them",
	New: func(cfg reference.Config) (Server, error) {
		b, err := newBase(cfg)
		if err != nil {
			return nil, err
		}
		o := &outbox{base: b}
		b.indeterminate = func(ctx context.Context, j job) {
			if err := b.store.Release(ctx, j.scope, j.keyHash, j.requestID, b.replica, time.Now()); err != nil {
				b.log.Warn("release", "err", err)
			}
			o.push(j)
		}
		return o, nil
	},
}

// redriveAfter, in recovery delays, is when the outbox re-sends: late
// enough that the client's retries have long been answered.
const redriveAfter = 4

// outbox is the base server plus its re-drive queue.
type outbox struct {
	*base
	mu    sync.Mutex
	queue []queued
}

type queued struct {
	j   job
	due time.Time
}

func (o *outbox) push(j job) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queue = append(o.queue, queued{j: j, due: time.Now().Add(redriveAfter * o.cfg.RecoveryAfter)})
}

// Run adds the outbox worker to the base server's background work.
func (o *outbox) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { o.drive(ctx) })
	err := o.base.Run(ctx)
	wg.Wait()
	return err
}

func (o *outbox) drive(ctx context.Context) {
	t := time.NewTicker(o.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, j := range o.due() {
			j.requestID = newID("redrive_")
			o.gw.Charge(context.WithoutCancel(ctx), reference.GatewayRequest{RequestID: j.requestID, ChargeParams: j.params})
		}
	}
}

func (o *outbox) due() []job {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []job
	keep := o.queue[:0]
	for _, q := range o.queue {
		if time.Now().After(q.due) {
			out = append(out, q.j)
		} else {
			keep = append(keep, q)
		}
	}
	o.queue = keep
	return out
}
