package reference

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// NotifyChannel is the LISTEN/NOTIFY channel on which a replica announces
// that a key was finished or released. The payload is NotifyPayload.
const NotifyChannel = "idemcheck_reference_keys"

// maxNotifyBody is the largest response body a finish notification
// carries (hex doubles it; PostgreSQL caps payloads below 8000 bytes).
const maxNotifyBody = 3000

// NotifyPayload is the routing part of a key's notification payload:
// tenant "." hex(key hash).
func NotifyPayload(tenant string, keyHash []byte) string {
	return tenant + "." + fmt.Sprintf("%x", keyHash)
}

// unresolvedKey is the test for an unresolved row in a statement that
// names its key: state IN ('in_progress', 'needs_recovery'), written as
// the complement (the state check allows four states). Written the first
// way, it is the predicate of the partial index idempotency_keys_unresolved,
// and the planner, which takes that index for a few rows, scans all of it
// instead of looking the key up by its primary key: every unresolved key,
// and every finished one whose index entry is not yet vacuumed, on every
// finish, and every key whose lease ran out on every takeover (claim and
// finish from 16 clients: 73 buffers read per finish, 13 with the look-up,
// and a third of the database's time per key). Only the sweeper's scan
// (LeaseStale) means to use that index.
const unresolvedKey = `state NOT IN ('succeeded', 'failed')`

// PostgresStore is the reference's store adapter for PostgreSQL: one
// statement per transition, each a single round trip, each comparing times
// against the `now` the caller passes (never the database's now()), so
// tests can drive leases and expiry with a fake clock. Safety rests on
// these statements alone; no in-process lock is trusted. It wakes waiters
// through LISTEN/NOTIFY (Listen): Finish and Release notify in the same
// statement when a waiter registered.
type PostgresStore struct {
	pool *pgxpool.Pool
}

// NewPostgresStore returns the adapter over pool. Migrate must have run.
func NewPostgresStore(pool *pgxpool.Pool) *PostgresStore { return &PostgresStore{pool: pool} }

// Clock reads the database's clock (Clocked).
func (p *PostgresStore) Clock(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := p.pool.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&t)
	return t, err
}

// Ping checks that the database answers.
func (s *PostgresStore) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

const recordColumns = `tenant, key_hash, idem_key, fingerprint, state, request_id, amount, currency, order_id,
	description, lease_owner, lease_until, attempts, response_status, response_body, charge_id,
	created_at, expires_at, forget_at, compacted`

// recordScan receives a row's columns, all nullable, so one scan serves
// both a row and the all-NULL side of an outer join.
type recordScan struct {
	tenant, key, state, requestID, currency, orderID, desc, owner, charge *string
	keyHash, fingerprint, body                                            []byte
	amount                                                                *int64
	leaseUntil, createdAt, expiresAt, forgetAt                            *time.Time
	attempts                                                              *int32
	status                                                                *int16
	compacted                                                             *bool
}

func (r *recordScan) dest() []any {
	return []any{&r.tenant, &r.keyHash, &r.key, &r.fingerprint, &r.state, &r.requestID, &r.amount, &r.currency,
		&r.orderID, &r.desc, &r.owner, &r.leaseUntil, &r.attempts, &r.status, &r.body, &r.charge,
		&r.createdAt, &r.expiresAt, &r.forgetAt, &r.compacted}
}

// record returns the scanned row, or nil for an all-NULL outer-join side.
func (r *recordScan) record() *Record {
	if r.tenant == nil {
		return nil
	}
	rec := &Record{
		Tenant: *r.tenant, KeyHash: r.keyHash, Key: deref(r.key), Fingerprint: r.fingerprint, State: deref(r.state),
		RequestID: deref(r.requestID), LeaseOwner: deref(r.owner), LeaseUntil: deref(r.leaseUntil),
		Attempts: int(deref(r.attempts)), CreatedAt: deref(r.createdAt), ExpiresAt: deref(r.expiresAt),
		ForgetAt: deref(r.forgetAt), Compacted: deref(r.compacted),
		Params: ChargeParams{Amount: deref(r.amount), Currency: deref(r.currency), OrderID: deref(r.orderID),
			Description: deref(r.desc)},
		Result: Result{Status: int(deref(r.status)), Body: r.body, ChargeID: deref(r.charge)},
	}
	return rec
}

func scanRecord(row pgx.Row) (*Record, error) {
	var rs recordScan
	if err := row.Scan(rs.dest()...); err != nil {
		return nil, err
	}
	return rs.record(), nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// claimSQL is Claim's statement, built once.
var claimSQL = `
	WITH ins AS (
		INSERT INTO idempotency_keys (tenant, key_hash, idem_key, fingerprint, state, request_id,
			amount, currency, order_id, description, lease_owner, lease_until, created_at, expires_at, forget_at)
		VALUES ($1, $2, $3, $4, 'in_progress', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (tenant, key_hash) DO NOTHING
		RETURNING 1)
	SELECT EXISTS (SELECT 1 FROM ins), ` + qualified("k", recordColumns) + `
	FROM (SELECT) one LEFT JOIN idempotency_keys k
		ON k.tenant = $1 AND k.key_hash = $2 AND NOT EXISTS (SELECT 1 FROM ins)`

// Claim inserts the row for a new key, atomically: INSERT … ON CONFLICT DO
// NOTHING on (tenant, key hash). It reports whether this call created the
// row. When it did not, the same statement also returns the existing row if
// it was committed before the statement began (a replay costs one round
// trip); existing is nil when the conflicting row committed during the
// statement, and the caller looks it up.
func (s *PostgresStore) Claim(ctx context.Context, c Claim) (claimed bool, existing *Record, err error) {
	var rs recordScan
	err = s.pool.QueryRow(ctx, claimSQL,
		c.Tenant, c.KeyHash, c.Key, c.Fingerprint, c.RequestID,
		c.Params.Amount, c.Params.Currency, c.Params.OrderID, c.Params.Description,
		c.Owner, c.Now.Add(c.Lease), c.Now, c.Now.Add(c.TTL), c.Now.Add(max(c.Forget, c.TTL))).
		Scan(append([]any{&claimed}, rs.dest()...)...)
	if err != nil {
		return false, nil, fmt.Errorf("claim: %w", err)
	}
	return claimed, rs.record(), nil
}

// Reclaim turns a forgotten key (finished, past forget_at, not yet deleted
// by the sweeper) into a fresh claim, atomically; only one caller wins.
func (s *PostgresStore) Reclaim(ctx context.Context, c Claim) (bool, error) {
	forget := max(c.Forget, c.TTL)
	tag, err := s.pool.Exec(ctx, `
		UPDATE idempotency_keys SET idem_key = $3, fingerprint = $4, state = 'in_progress', request_id = $5,
			amount = $6, currency = $7, order_id = $8, description = $9, lease_owner = $10, lease_until = $11,
			attempts = 1, waiters = 0, response_status = NULL, response_body = NULL, charge_id = NULL,
			created_at = $12, finished_at = NULL, expires_at = $13, forget_at = $14, compacted = false
		WHERE tenant = $1 AND key_hash = $2 AND state IN ('succeeded', 'failed') AND forget_at <= $12`,
		c.Tenant, c.KeyHash, c.Key, c.Fingerprint, c.RequestID,
		c.Params.Amount, c.Params.Currency, c.Params.OrderID, c.Params.Description,
		c.Owner, c.Now.Add(c.Lease), c.Now, c.Now.Add(c.TTL), c.Now.Add(forget))
	if err != nil {
		return false, fmt.Errorf("reclaim: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Lookup returns the row for a key, or ErrNotFound.
func (s *PostgresStore) Lookup(ctx context.Context, tenant string, keyHash []byte) (*Record, error) {
	rec, err := scanRecord(s.pool.QueryRow(ctx,
		`SELECT `+recordColumns+` FROM idempotency_keys WHERE tenant = $1 AND key_hash = $2`, tenant, keyHash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	return rec, nil
}

// Finish stores a definitive result for the claim made under requestID and
// notifies waiters if any registered, in one statement (the NOTIFY is
// delivered at commit, and carries the result; see Notice). It
// reports false when the key was already finished, by a takeover that asked
// the gateway about the same request id; the caller then answers with the
// stored result, which the gateway's idempotency makes the same decision.
func (s *PostgresStore) Finish(ctx context.Context, tenant string, keyHash []byte, requestID string, res Result, now time.Time) (bool, error) {
	state := StateFailed
	if res.Succeeded() {
		state = StateSucceeded
	}
	tag, err := s.pool.Exec(ctx, `
		WITH done AS (
			UPDATE idempotency_keys SET state = $4, response_status = $5, response_body = $6,
				charge_id = NULLIF($7, ''), finished_at = $8, lease_owner = NULL
			WHERE tenant = $1 AND key_hash = $2 AND request_id = $3 AND `+unresolvedKey+`
			RETURNING tenant, key_hash, waiters, response_status, request_id, response_body)
		SELECT CASE WHEN waiters > 0 THEN pg_notify($9, tenant || '.' || encode(key_hash, 'hex') ||
			CASE WHEN octet_length(response_body) <= $10
				THEN ' ' || response_status || ' ' || request_id || ' ' || encode(response_body, 'hex')
				ELSE '' END) END
		FROM done`,
		tenant, keyHash, requestID, state, int16(res.Status), res.Body, res.ChargeID, now, NotifyChannel, maxNotifyBody)
	if err != nil {
		return false, fmt.Errorf("finish: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Release records an indeterminate attempt: the key stays claimed under the
// same request id (never released for reuse, never failed) but moves to
// needs_recovery with its lease expired, so the next retry or the sweeper
// re-asks the gateway at once. Waiters are notified. Only the lease holder
// releases.
func (s *PostgresStore) Release(ctx context.Context, tenant string, keyHash []byte, requestID, owner string, now time.Time) error {
	_, err := s.pool.Exec(ctx, `
		WITH rel AS (
			UPDATE idempotency_keys SET state = 'needs_recovery', lease_until = $5, lease_owner = NULL
			WHERE tenant = $1 AND key_hash = $2 AND request_id = $3 AND lease_owner = $4
				AND `+unresolvedKey+`
			RETURNING tenant, key_hash, waiters)
		SELECT CASE WHEN waiters > 0 THEN pg_notify($6, tenant || '.' || encode(key_hash, 'hex')) END FROM rel`,
		tenant, keyHash, requestID, owner, now, NotifyChannel)
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

// Register records a waiter on an unresolved key, so that finishing or
// releasing it will NOTIFY; it returns the row as registered, or nil when
// the key is no longer unresolved (read it again). A waiter must Subscribe
// to the hub before registering: the row lock orders Register against
// Finish, so either Finish sees the waiter and notifies after Register, or
// Register sees the key resolved.
func (s *PostgresStore) Register(ctx context.Context, tenant string, keyHash []byte) (*Record, error) {
	rec, err := scanRecord(s.pool.QueryRow(ctx, `
		UPDATE idempotency_keys SET waiters = waiters + 1
		WHERE tenant = $1 AND key_hash = $2 AND `+unresolvedKey+`
		RETURNING `+recordColumns, tenant, keyHash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("register waiter: %w", err)
	}
	return rec, nil
}

// TakeOver gives an unresolved key whose lease has expired to owner,
// atomically (only one caller wins), and moves it to needs_recovery. It
// returns the row as taken, or nil when the lease is live or the key is
// resolved. The new owner must re-send the row's RequestID.
func (s *PostgresStore) TakeOver(ctx context.Context, tenant string, keyHash []byte, owner string, now time.Time, lease time.Duration) (*Record, error) {
	rec, err := scanRecord(s.pool.QueryRow(ctx, `
		UPDATE idempotency_keys SET state = 'needs_recovery', lease_owner = $3, lease_until = $4, attempts = attempts + 1
		WHERE tenant = $1 AND key_hash = $2 AND `+unresolvedKey+` AND lease_until <= $5
		RETURNING `+recordColumns, tenant, keyHash, owner, now.Add(lease), now))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("take over: %w", err)
	}
	return rec, nil
}

// LeaseStale is the sweeper's takeover: it leases up to limit unresolved
// rows whose lease expired and that are older than recoverAfter, skipping
// rows another replica has locked (FOR UPDATE SKIP LOCKED), and moves them
// to needs_recovery under owner.
func (s *PostgresStore) LeaseStale(ctx context.Context, owner string, now time.Time, lease, recoverAfter time.Duration, limit int) ([]*Record, error) {
	rows, err := s.pool.Query(ctx, `
		UPDATE idempotency_keys k SET state = 'needs_recovery', lease_owner = $1, lease_until = $2,
			attempts = k.attempts + 1
		FROM (SELECT tenant, key_hash FROM idempotency_keys
			WHERE state IN ('in_progress', 'needs_recovery') AND lease_until <= $3 AND created_at <= $4
			ORDER BY lease_until LIMIT $5 FOR UPDATE SKIP LOCKED) v
		WHERE k.tenant = v.tenant AND k.key_hash = v.key_hash
		RETURNING `+qualified("k", recordColumns), owner, now.Add(lease), now, now.Add(-recoverAfter), limit)
	if err != nil {
		return nil, fmt.Errorf("lease stale: %w", err)
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Record, error) { return scanRecord(row) })
	if err != nil {
		return nil, fmt.Errorf("lease stale: %w", err)
	}
	return recs, nil
}

// Expire does one batch of expiry: finished rows past expires_at (the TTL)
// are compacted in place into tombstones (key text and request fields
// dropped; fingerprint, response and charge id kept, expires_at moved to
// forget_at), and tombstones past forget_at are deleted. Unresolved rows
// never expire: they are recovered first. Replicas share the work through
// SKIP LOCKED.
func (s *PostgresStore) Expire(ctx context.Context, now time.Time, limit int) (compacted, forgotten int64, err error) {
	tag, err := s.pool.Exec(ctx, `
		UPDATE idempotency_keys k SET idem_key = NULL, amount = NULL, currency = NULL, order_id = NULL,
			description = NULL, lease_owner = NULL, compacted = true, expires_at = k.forget_at
		FROM (SELECT tenant, key_hash FROM idempotency_keys
			WHERE state IN ('succeeded', 'failed') AND expires_at <= $1 AND NOT compacted
			ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) v
		WHERE k.tenant = v.tenant AND k.key_hash = v.key_hash`, now, limit)
	if err != nil {
		return 0, 0, fmt.Errorf("expire: compact: %w", err)
	}
	compacted = tag.RowsAffected()
	tag, err = s.pool.Exec(ctx, `
		DELETE FROM idempotency_keys k
		USING (SELECT tenant, key_hash FROM idempotency_keys
			WHERE state IN ('succeeded', 'failed') AND expires_at <= $1 AND compacted
			ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) v
		WHERE k.tenant = v.tenant AND k.key_hash = v.key_hash`, now, limit)
	if err != nil {
		return compacted, 0, fmt.Errorf("expire: forget: %w", err)
	}
	return compacted, tag.RowsAffected(), nil
}

// RenewLeases extends owner's leases on the unresolved keys it holds, each
// under its request id, to now+lease (never shortening one), in one
// statement. It returns the ids (Lease.ID) of the leases still owner's;
// the others were taken over, released or finished.
func (s *PostgresStore) RenewLeases(ctx context.Context, owner string, leases []Lease, now time.Time, lease time.Duration) (map[string]bool, error) {
	tenants, hashes, ids := make([]string, len(leases)), make([][]byte, len(leases)), make([]string, len(leases))
	for i, l := range leases {
		tenants[i], hashes[i], ids[i] = l.Tenant, l.KeyHash, l.RequestID
	}
	rows, err := s.pool.Query(ctx, `
		UPDATE idempotency_keys k SET lease_until = GREATEST(k.lease_until, $5)
		FROM unnest($1::text[], $2::bytea[], $3::text[]) AS h(tenant, key_hash, request_id)
		WHERE k.tenant = h.tenant AND k.key_hash = h.key_hash AND k.request_id = h.request_id
			AND k.lease_owner = $4 AND k.`+unresolvedKey+`
		RETURNING k.tenant, k.key_hash, k.request_id`,
		tenants, hashes, ids, owner, now.Add(lease))
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	held := map[string]bool{}
	var l Lease
	_, err = pgx.ForEachRow(rows, []any{&l.Tenant, &l.KeyHash, &l.RequestID}, func() error {
		held[l.ID()] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	return held, nil
}

// qualified prefixes each column of a comma-separated list with alias.
func qualified(alias, cols string) string {
	out := make([]byte, 0, len(cols)*2)
	start := true
	for i := 0; i < len(cols); i++ {
		c := cols[i]
		if start && c != ' ' && c != '\t' && c != '\n' {
			out = append(out, alias...)
			out = append(out, '.')
			start = false
		}
		out = append(out, c)
		if c == ',' {
			start = true
		}
	}
	return string(out)
}
