package zoo

import (
	"context"
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/reference"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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
		srv, err := hooked(outboxHooks)(cfg)
		if err != nil {
			return nil, err
		}
		if err := createOutbox(cfg.Pool); err != nil {
			return nil, err
		}
		return srv, nil
	},
}

// outboxHooks write an indeterminate attempt down, after releasing it as
// the reference does, and drain the outbox at every sweep.
func outboxHooks(s *reference.Server) reference.Hooks {
	return reference.Hooks{
		Indeterminate: func(ctx context.Context, j reference.Job) {
			s.Release(ctx, j)
			push(ctx, s, j)
		},
		Sweep: func(ctx context.Context) { redrive(ctx, s) },
	}
}

// createOutbox creates the outbox table. Replicas start together: CREATE
// TABLE IF NOT EXISTS can lose a race on the catalog, so the creation
// holds a transaction-scoped advisory lock until it commits (a session
// lock released in the same query string is released before the implicit
// commit, and the next replica does not see the table yet).
func createOutbox(pool *pgxpool.Pool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7004); `+outboxSchema)
		return err
	}); err != nil {
		return fmt.Errorf("zoo_outbox: %w", err)
	}
	return nil
}

// redriveAfter, in recovery delays, is when the outbox re-sends: late
// enough that the client's retries have long been answered.
const redriveAfter = 4

const outboxSchema = `CREATE TABLE IF NOT EXISTS zoo_outbox (
	request_id text PRIMARY KEY, amount bigint NOT NULL, currency text NOT NULL,
	order_id text NOT NULL, description text NOT NULL, due timestamptz NOT NULL)`

func push(ctx context.Context, s *reference.Server, j reference.Job) {
	p := j.Params
	_, err := s.Config().Pool.Exec(ctx, `INSERT INTO zoo_outbox VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
		j.RequestID, p.Amount, p.Currency, p.OrderID, p.Description, time.Now().Add(redriveAfter*s.Config().RecoveryAfter))
	if err != nil {
		s.Config().Logger.Warn("outbox", "err", err)
	}
}

// redrive takes the outbox entries whose time has come (each by one
// replica) and charges them again under new gateway keys: the bug.
func redrive(ctx context.Context, s *reference.Server) {
	rows, err := s.Config().Pool.Query(ctx, `DELETE FROM zoo_outbox WHERE request_id IN (
		SELECT request_id FROM zoo_outbox WHERE due < now() FOR UPDATE SKIP LOCKED)
		RETURNING amount, currency, order_id, description`)
	if err != nil {
		s.Config().Logger.Warn("outbox", "err", err)
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
		s.Config().Gateway.Charge(context.WithoutCancel(ctx), reference.GatewayRequest{RequestID: reference.NewID("redrive_"), ChargeParams: p})
	}
}
