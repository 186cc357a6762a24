package zoo

import (
	"context"
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/reference"
	"github.com/jackc/pgx/v5"
)

// sweeperRecharges re-drives payments from an outbox table: every gateway
// call that ended indeterminate (a 5xx, a dropped connection) is written
// down, and the sweeper re-sends it after the recovery delay under a fresh
// gateway request id, without asking whether a client retry has resolved
// the key meanwhile. The outbox lives in PostgreSQL, so it survives
// crashes, and a takeover never clears it.
//
// Incident: the gateway charged and then failed its answer; the client's
// retry recovered the charge (one charge, answered); seconds after the
// client's last answer the outbox charged the order again (M1, found by
// the reconciliation of the gateway's whole ledger when the example had
// already been judged).
var sweeperRecharges = Variant{
	Name: "sweeper-recharges",
	Bug:  "an outbox worker re-sends indeterminate charges under a new gateway key, even after a retry resolved them",
	New: func(cfg reference.Config) (Server, error) {
		b, err := newBase(cfg)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
		defer cancel()
		// Replicas start together: CREATE TABLE IF NOT EXISTS can lose a
		// race on the catalog, so the creation holds an advisory lock
		// until it commits. (A session lock released in the same query
		// string was released before the implicit commit: the next replica
		// did not see the table yet and failed with 42P07, once in 10 seeds.)
		if err := pgx.BeginFunc(ctx, b.store.Pool(), func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7004); `+outboxSchema)
			return err
		}); err != nil {
			return nil, fmt.Errorf("zoo_outbox: %w", err)
		}
		b.indeterminate = func(ctx context.Context, j job) {
			if err := b.store.Release(ctx, j.scope, j.keyHash, j.requestID, b.replica, time.Now()); err != nil {
				b.log.Warn("release", "err", err)
			}
			push(ctx, b, j)
		}
		b.alsoSweep = func(ctx context.Context) { redrive(ctx, b) }
		return b, nil
	},
}

// redriveAfter, in recovery delays, is when the outbox re-sends: late
// enough that the client's retries have long been answered.
const redriveAfter = 4

const outboxSchema = `CREATE TABLE IF NOT EXISTS zoo_outbox (
	request_id text PRIMARY KEY, amount bigint NOT NULL, currency text NOT NULL,
	order_id text NOT NULL, description text NOT NULL, due timestamptz NOT NULL)`

func push(ctx context.Context, b *base, j job) {
	p := j.params
	_, err := b.store.Pool().Exec(ctx, `INSERT INTO zoo_outbox VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
		j.requestID, p.Amount, p.Currency, p.OrderID, p.Description, time.Now().Add(redriveAfter*b.cfg.RecoveryAfter))
	if err != nil {
		b.log.Warn("outbox", "err", err)
	}
}

// redrive takes the outbox entries whose time has come (each by one
// replica) and charges them again under new gateway keys: the bug.
func redrive(ctx context.Context, b *base) {
	rows, err := b.store.Pool().Query(ctx, `DELETE FROM zoo_outbox WHERE request_id IN (
		SELECT request_id FROM zoo_outbox WHERE due < now() FOR UPDATE SKIP LOCKED)
		RETURNING amount, currency, order_id, description`)
	if err != nil {
		b.log.Warn("outbox", "err", err)
		return
	}
	var due []reference.ChargeParams
	for rows.Next() {
		var p reference.ChargeParams
		if rows.Scan(&p.Amount, &p.Currency, &p.OrderID, &p.Description) == nil {
			due = append(due, p)
		}
	}
	rows.Close()
	for _, p := range due {
		b.gw.Charge(context.WithoutCancel(ctx), reference.GatewayRequest{RequestID: newID("redrive_"), ChargeParams: p})
	}
}
