package zoo

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemcheck/idemcheck/reference"
)

// tzNaiveExpiry is the reference with an expiry guard written as in
// elizaOS/eliza PR #27661 ("reclaim expired idempotency claims on
// conflict"): each claim also writes its expiry into a column of type
// timestamp without time zone, from the application's clock in UTC, and
// a new request with a taken key first reclaims it when
// expires_at < now(), compared in SQL. PostgreSQL compares the two by
// reading the zone-less value in the session's TimeZone, so the guard is
// right only in a UTC session: in any zone ahead of UTC a live key reads
// as already expired, the retry deletes the claim, claims afresh and
// charges under a new gateway request id. (Behind UTC the key lives hours
// longer than it should, which loses nothing.) The key is kept for its
// whole dedupe window, max(TTL, tombstone TTL), so in UTC the member keeps
// every promise it declares.
//
// Incident: a service deployed with its database role's TimeZone set to
// local time (Asia/Kolkata, deploymentZone: the member runs so); a retry
// a second after the first answer is charged again (E1, M1; found by
// late-retry and by any family that retries inside the TTL).
var tzNaiveExpiry = Variant{
	Name: "tz-naive-expiry",
	Bug:  "reclaims a key when its expires_at (timestamp without time zone, written from the app's UTC clock) is before the database's now(); outside a UTC session live keys read as expired",
	New: func(cfg reference.Config) (Server, error) {
		if cfg.Pool == nil {
			return nil, errors.New("tz-naive-expiry keeps its expiry guard in PostgreSQL (--store=postgres)")
		}
		if err := createNaiveExpiry(context.Background(), cfg.Pool); err != nil {
			return nil, err
		}
		cfg.Store = naiveExpiryStore{PostgresStore: reference.NewPostgresStore(cfg.Pool), pool: cfg.Pool}
		return newReference(cfg)
	},
}

// createNaiveExpiry creates the guard's table, once across replicas
// starting together (an advisory lock serialises CREATE TABLE IF NOT
// EXISTS, which races on the catalog otherwise).
func createNaiveExpiry(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(27661)`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS naive_key_expiry (
			tenant text NOT NULL, key_hash bytea NOT NULL, expires_at timestamp NOT NULL,
			PRIMARY KEY (tenant, key_hash))`)
		return err
	})
}

// deploymentZone is the TimeZone of the member's database role: local
// time east of UTC, where the zone-less expiry reads as already past.
const deploymentZone = "Asia/Kolkata"

// naiveExpiryStore is the reference's PostgreSQL store with the guard in
// front of its claim.
type naiveExpiryStore struct {
	*reference.PostgresStore
	pool *pgxpool.Pool
}

// Claim first reclaims a key whose expiry has passed by the session's
// reading of now(), then claims as the reference does, and records the
// new claim's expiry as the application's UTC wall time.
func (s naiveExpiryStore) Claim(ctx context.Context, c reference.Claim) (bool, *reference.Record, error) {
	// The bug: expires_at is zone-less and now() is not; PostgreSQL reads
	// expires_at in the session's TimeZone.
	// The deployment: the database role's TimeZone is local time
	// (deploymentZone), as in the incident; SET LOCAL stands for the
	// role's setting, so the member shows its bug in a default
	// certification and under any db_timezone fault alike.
	if err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('TimeZone', $1, true)`, deploymentZone); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
		WITH gone AS (DELETE FROM naive_key_expiry WHERE tenant = $1 AND key_hash = $2 AND expires_at < now() RETURNING 1)
		DELETE FROM idempotency_keys WHERE tenant = $1 AND key_hash = $2 AND EXISTS (SELECT 1 FROM gone)`,
			c.Tenant, c.KeyHash)
		return err
	}); err != nil {
		return false, nil, fmt.Errorf("reclaim expired: %w", err)
	}
	claimed, rec, err := s.PostgresStore.Claim(ctx, c)
	if err != nil || !claimed {
		return claimed, rec, err
	}
	wall := c.Now.Add(max(c.TTL, c.Forget)).UTC().Format("2006-01-02 15:04:05.999999")
	if _, err := s.pool.Exec(ctx, `
		INSERT INTO naive_key_expiry (tenant, key_hash, expires_at) VALUES ($1, $2, $3::timestamp)
		ON CONFLICT (tenant, key_hash) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
		c.Tenant, c.KeyHash, wall); err != nil {
		return false, nil, fmt.Errorf("record expiry: %w", err)
	}
	return claimed, rec, nil
}
