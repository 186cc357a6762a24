package mysqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// The sweeper's statements work on batches: a transaction locks up to
// limit candidate rows with SELECT … FOR UPDATE SKIP LOCKED (rows another
// replica's sweeper holds are skipped, so concurrent sweepers share the
// work and never wait on each other), changes exactly those rows, and
// commits.

// lockKeys runs a locking SELECT of tenant, key_hash in tx and returns the
// keys locked.
func lockKeys(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]pk, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []pk
	for rows.Next() {
		var k pk
		if err := rows.Scan(&k.tenant, &k.keyHash); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// LeaseStale takes over up to limit unresolved keys whose lease expired
// and that were claimed at least recoverAfter ago (by the caller's clock),
// skipping those another sweeper has locked, and returns them as taken.
func (s *Store) LeaseStale(ctx context.Context, owner string, now time.Time, lease, recoverAfter time.Duration, limit int) ([]*reference.Record, error) {
	var recs []*reference.Record
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		recs = nil
		keys, err := lockKeys(ctx, tx, `SELECT tenant, key_hash FROM idempotency_keys
			WHERE `+unresolved+` AND lease_until <= ? AND created_at <= ?
			LIMIT ? FOR UPDATE SKIP LOCKED`, now, now.Add(-recoverAfter), limit)
		if err != nil || len(keys) == 0 {
			return err
		}
		where, args := matchKeys(keys)
		if _, err := tx.ExecContext(ctx, `UPDATE idempotency_keys SET state = 'needs_recovery', lease_owner = ?,
			lease_until = ?, attempts = attempts + 1 WHERE `+where, append([]any{owner, now.Add(lease)}, args...)...); err != nil {
			return err
		}
		recs, err = readRecords(ctx, tx, where, args)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lease stale: %w", err)
	}
	return recs, nil
}

// readRecords reads the records of the rows matching where.
func readRecords(ctx context.Context, tx *sql.Tx, where string, args []any) ([]*reference.Record, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+columns+` FROM idempotency_keys WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var recs []*reference.Record
	for rows.Next() {
		rec, err := scan(rows)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	return recs, rows.Err()
}

// RenewLeases extends owner's leases on the unresolved keys it still
// holds under each lease's request id to now+lease, never shortening one.
// The rows held are locked and read first, then extended, in one
// transaction: an UPDATE's affected rows would not count a lease already
// long enough, which is held all the same.
func (s *Store) RenewLeases(ctx context.Context, owner string, leases []reference.Lease, now time.Time, lease time.Duration) (map[string]bool, error) {
	held := map[string]bool{}
	if len(leases) == 0 {
		return held, nil
	}
	match, args := matchLeases(leases)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		clear(held)
		rows, err := tx.QueryContext(ctx, `SELECT tenant, key_hash, request_id FROM idempotency_keys
			WHERE lease_owner = ? AND `+unresolved+` AND (`+match+`) FOR UPDATE`, append([]any{owner}, args...)...)
		if err != nil {
			return err
		}
		keys, err := heldLeases(rows, held)
		if err != nil || len(keys) == 0 {
			return err
		}
		where, kargs := matchKeys(keys)
		_, err = tx.ExecContext(ctx, `UPDATE idempotency_keys SET lease_until = GREATEST(lease_until, ?) WHERE `+where,
			append([]any{now.Add(lease)}, kargs...)...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	return held, nil
}

// matchLeases is a WHERE clause matching the rows of leases under their
// request ids, and its arguments.
func matchLeases(leases []reference.Lease) (string, []any) {
	where := make([]byte, 0, len(leases)*60)
	args := make([]any, 0, 3*len(leases))
	for i, l := range leases {
		if i > 0 {
			where = append(where, " OR "...)
		}
		where = append(where, "(tenant = ? AND key_hash = ? AND request_id = ?)"...)
		args = append(args, l.Tenant, l.KeyHash, l.RequestID)
	}
	return string(where), args
}

// heldLeases reads the leases still held into held (by Lease.ID) and
// returns their keys.
func heldLeases(rows *sql.Rows, held map[string]bool) ([]pk, error) {
	defer rows.Close()
	var keys []pk
	for rows.Next() {
		var l reference.Lease
		if err := rows.Scan(&l.Tenant, &l.KeyHash, &l.RequestID); err != nil {
			return nil, err
		}
		held[l.ID()] = true
		keys = append(keys, pk{tenant: l.Tenant, keyHash: l.KeyHash})
	}
	return keys, rows.Err()
}

// Expire does one batch of expiry: up to limit finished rows past
// expires_at become tombstones (key text and request fields dropped;
// fingerprint, result and charge id kept; expires_at moved to forget_at),
// then up to limit tombstones past forget_at are deleted. Unresolved rows
// never expire: they are recovered first.
func (s *Store) Expire(ctx context.Context, now time.Time, limit int) (compacted, forgotten int64, err error) {
	compacted, err = s.batch(ctx, `SELECT tenant, key_hash FROM idempotency_keys
		WHERE state IN ('succeeded', 'failed') AND compacted = FALSE AND expires_at <= ?
		LIMIT ? FOR UPDATE SKIP LOCKED`, `UPDATE idempotency_keys SET idem_key = NULL, amount = NULL, currency = NULL,
		order_id = NULL, description = NULL, lease_owner = NULL, compacted = TRUE, expires_at = forget_at WHERE `,
		now, limit)
	if err != nil {
		return 0, 0, fmt.Errorf("expire: compact: %w", err)
	}
	forgotten, err = s.batch(ctx, `SELECT tenant, key_hash FROM idempotency_keys
		WHERE state IN ('succeeded', 'failed') AND compacted = TRUE AND expires_at <= ?
		LIMIT ? FOR UPDATE SKIP LOCKED`, `DELETE FROM idempotency_keys WHERE `, now, limit)
	if err != nil {
		return compacted, 0, fmt.Errorf("expire: forget: %w", err)
	}
	return compacted, forgotten, nil
}

// batch locks the rows selectQuery picks and runs change (a statement
// ending in WHERE) on exactly those, in one transaction; it returns the
// rows changed.
func (s *Store) batch(ctx context.Context, selectQuery, change string, args ...any) (int64, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n = 0
		keys, err := lockKeys(ctx, tx, selectQuery, args...)
		if err != nil || len(keys) == 0 {
			return err
		}
		where, kargs := matchKeys(keys)
		res, err := tx.ExecContext(ctx, change+where, kargs...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
