package zoo

import (
	"context"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// sweeperRecharges re-drives payments from an outbox table: every gateway
// call that ended indeterminate (a 5xx, a dropped connection) is written
// down, and a background worker re-sends it after the recovery delay under
// a fresh gateway request id, without asking whether a client retry has
// resolved the key meanwhile. The outbox lives in PostgreSQL, so it
// survives crashes, and a takeover never clears it.
//
// Incident: the gateway charged and then failed its answer; the client's
// retry recovered the charge (one charge, answered); seconds after the
// client's last answer the outbox worker charged the order again (M1,
// found by the reconciliation of the gateway's whole ledger when the
// example had already been judged).
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
			o.push(ctx, j)
		}
		return o, nil
	},
}

// redriveAfter, in recovery delays, is when the outbox re-sends: late
// enough that the client's retries have long been answered.
const redriveAfter = 4

// outbox is the base server plus its re-drive table.
type outbox struct{ *base }

const outboxSchema = `CREATE TABLE IF NOT EXISTS zoo_outbox (
	request_id text PRIMARY KEY, amount bigint NOT NULL, currency text NOT NULL,
	order_id text NOT NULL, description text NOT NULL, due timestamptz NOT NULL)`

func (o *outbox) push(ctx context.Context, j job) {
	p := j.params
	_, err := o.store.Pool().Exec(ctx, outboxSchema+`;`)
	if err == nil {
		_, err = o.store.Pool().Exec(ctx, `INSERT INTO zoo_outbox VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			j.requestID, p.Amount, p.Currency, p.OrderID, p.Description, time.Now().Add(redriveAfter*o.cfg.RecoveryAfter))
	}
	if err != nil {
		o.log.Warn("outbox", "err", err)
	}
}

// Run adds the outbox worker to the base server's background work.
func (o *outbox) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() { defer close(done); o.drive(ctx) }()
	err := o.base.Run(ctx)
	<-done
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
		for _, p := range o.due(ctx) {
			o.gw.Charge(context.WithoutCancel(ctx), reference.GatewayRequest{RequestID: newID("redrive_"), ChargeParams: p})
		}
	}
}

// due takes the outbox entries whose time has come (one replica each).
func (o *outbox) due(ctx context.Context) []reference.ChargeParams {
	rows, err := o.store.Pool().Query(ctx, `DELETE FROM zoo_outbox WHERE request_id IN (
		SELECT request_id FROM zoo_outbox WHERE due < now() FOR UPDATE SKIP LOCKED)
		RETURNING amount, currency, order_id, description`)
	if err != nil {
		return nil // no outbox yet
	}
	defer rows.Close()
	var out []reference.ChargeParams
	for rows.Next() {
		var p reference.ChargeParams
		if rows.Scan(&p.Amount, &p.Currency, &p.OrderID, &p.Description) == nil {
			out = append(out, p)
		}
	}
	return out
}
