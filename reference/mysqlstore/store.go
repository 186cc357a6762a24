package mysqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// Store is the reference.Store adapter for MySQL. See the package doc.
type Store struct {
	db *sql.DB
}

var (
	_ reference.Store   = (*Store)(nil)
	_ reference.Clocked = (*Store)(nil)
)

// New returns the adapter over db (see Open); Migrate must have run.
func New(db *sql.DB) *Store { return &Store{db: db} }

// DB is the underlying pool, for variants that need their own statements.
func (s *Store) DB() *sql.DB { return s.db }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Clock reads the database's clock in UTC, whatever the session's zone:
// reference.Clocked.
func (s *Store) Clock(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := s.db.QueryRowContext(ctx, "SELECT UTC_TIMESTAMP(6)").Scan(&t)
	return t, err
}

// unresolved is the SQL condition of a key whose outcome is not known.
const unresolved = `state IN ('in_progress', 'needs_recovery')`

// Claim inserts the row of a new key: INSERT … ON DUPLICATE KEY UPDATE
// that changes nothing on a duplicate, so the affected-row count says
// which happened (1 inserted, 0 the existing row untouched; Config keeps
// the count to rows changed). The row holds the intent (request id) and
// the owner's lease before any gateway call. When the key exists its
// record is read back (nil if it was deleted meanwhile).
func (s *Store) Claim(ctx context.Context, c reference.Claim) (bool, *reference.Record, error) {
	n, err := s.exec(ctx, `
		INSERT INTO idempotency_keys (tenant, key_hash, idem_key, fingerprint, state, request_id, amount, currency,
			order_id, description, lease_owner, lease_until, attempts, created_at, expires_at, forget_at)
		VALUES (?, ?, ?, ?, 'in_progress', ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)
		ON DUPLICATE KEY UPDATE tenant = tenant`, claimArgs(c)...)
	if err != nil {
		return false, nil, fmt.Errorf("claim: %w", err)
	}
	if n == 1 {
		return true, nil, nil
	}
	rec, err := s.Lookup(ctx, c.Tenant, c.KeyHash)
	if errors.Is(err, reference.ErrNotFound) {
		return false, nil, nil
	}
	return false, rec, err
}

// claimArgs are a claim's values in the order Claim inserts them.
func claimArgs(c reference.Claim) []any {
	return []any{c.Tenant, c.KeyHash, c.Key, c.Fingerprint, c.RequestID,
		c.Params.Amount, c.Params.Currency, c.Params.OrderID, c.Params.Description,
		c.Owner, c.Now.Add(c.Lease), c.Now, c.Now.Add(c.TTL), c.Now.Add(max(c.Forget, c.TTL))}
}

// Reclaim turns a forgotten key (finished, past forget_at by the caller's
// clock, not yet deleted by the sweeper) into a fresh claim, in one
// conditional UPDATE; of concurrent reclaims the row lock lets one win.
func (s *Store) Reclaim(ctx context.Context, c reference.Claim) (bool, error) {
	a := claimArgs(c)
	n, err := s.exec(ctx, `
		UPDATE idempotency_keys SET idem_key = ?, fingerprint = ?, state = 'in_progress', request_id = ?,
			amount = ?, currency = ?, order_id = ?, description = ?, lease_owner = ?, lease_until = ?,
			attempts = 1, response_status = NULL, response_body = NULL, charge_id = NULL,
			created_at = ?, finished_at = NULL, expires_at = ?, forget_at = ?, compacted = FALSE
		WHERE tenant = ? AND key_hash = ? AND state IN ('succeeded', 'failed') AND forget_at <= ?`,
		append(a[2:], c.Tenant, c.KeyHash, c.Now)...)
	if err != nil {
		return false, fmt.Errorf("reclaim: %w", err)
	}
	return n == 1, nil
}

// Lookup returns a key's record, or reference.ErrNotFound.
func (s *Store) Lookup(ctx context.Context, tenant string, keyHash []byte) (*reference.Record, error) {
	rec, err := scan(s.db.QueryRowContext(ctx,
		`SELECT `+columns+` FROM idempotency_keys WHERE tenant = ? AND key_hash = ?`, tenant, keyHash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, reference.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	return rec, nil
}

// Register returns an unresolved key's record, or nil when the key is
// absent or finished. The store does not notify (the hub polls every
// waiter), so a waiter needs no mark in the row: one read, ordered
// against Finish as any read of one row is.
func (s *Store) Register(ctx context.Context, tenant string, keyHash []byte) (*reference.Record, error) {
	rec, err := s.Lookup(ctx, tenant, keyHash)
	switch {
	case errors.Is(err, reference.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("register waiter: %w", err)
	case rec.Terminal():
		return nil, nil
	}
	return rec, nil
}

// Finish stores a definitive result only while the key is unresolved
// under requestID: one conditional UPDATE; false when the key was
// finished already or holds another request id.
func (s *Store) Finish(ctx context.Context, tenant string, keyHash []byte, requestID string, res reference.Result, now time.Time) (bool, error) {
	state := reference.StateFailed
	if res.Succeeded() {
		state = reference.StateSucceeded
	}
	n, err := s.exec(ctx, `
		UPDATE idempotency_keys SET state = ?, response_status = ?, response_body = ?, charge_id = NULLIF(?, ''),
			finished_at = ?, lease_owner = NULL
		WHERE tenant = ? AND key_hash = ? AND request_id = ? AND `+unresolved,
		state, res.Status, nonNil(res.Body), res.ChargeID, now, tenant, keyHash, requestID)
	if err != nil {
		return false, fmt.Errorf("finish: %w", err)
	}
	return n == 1, nil
}

// nonNil keeps an empty body a (non-NULL) empty blob.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Release moves the key to needs_recovery with its lease expired, only if
// owner holds it under requestID; the request id is kept.
func (s *Store) Release(ctx context.Context, tenant string, keyHash []byte, requestID, owner string, now time.Time) error {
	_, err := s.exec(ctx, `
		UPDATE idempotency_keys SET state = 'needs_recovery', lease_until = ?, lease_owner = NULL
		WHERE tenant = ? AND key_hash = ? AND request_id = ? AND lease_owner = ? AND `+unresolved,
		now, tenant, keyHash, requestID, owner)
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

// TakeOver gives an unresolved key whose lease expired (by the caller's
// clock) to owner: a conditional UPDATE, then the row read back in the
// same transaction, under the lock the UPDATE took, so the record
// returned is the one taken. Of concurrent takers the row lock lets one
// win; the others find the lease live.
func (s *Store) TakeOver(ctx context.Context, tenant string, keyHash []byte, owner string, now time.Time, lease time.Duration) (*reference.Record, error) {
	var rec *reference.Record
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		rec = nil
		res, err := tx.ExecContext(ctx, `
			UPDATE idempotency_keys SET state = 'needs_recovery', lease_owner = ?, lease_until = ?, attempts = attempts + 1
			WHERE tenant = ? AND key_hash = ? AND lease_until <= ? AND `+unresolved,
			owner, now.Add(lease), tenant, keyHash, now)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return err
		}
		rec, err = scan(tx.QueryRowContext(ctx,
			`SELECT `+columns+` FROM idempotency_keys WHERE tenant = ? AND key_hash = ?`, tenant, keyHash))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("take over: %w", err)
	}
	return rec, nil
}

// ErrNotMySQL is returned by From for a store that is not this adapter.
var ErrNotMySQL = errors.New("this variant keeps its keys in MySQL (run it with --store=mysql)")

// From is s as the MySQL adapter, for the variants built on MySQL; a
// variant started on another store fails at start-up instead of running
// as something it is not.
func From(s reference.Store) (*Store, error) {
	ms, ok := s.(*Store)
	if !ok {
		return nil, fmt.Errorf("%w; the store is %T", ErrNotMySQL, s)
	}
	return ms, nil
}
