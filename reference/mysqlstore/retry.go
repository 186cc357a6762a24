package mysqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/go-sql-driver/mysql"
)

// InnoDB's errors that undo a statement without applying it, so running
// it again is safe: a deadlock rolls the whole transaction back, a lock
// wait timeout the statement (the transaction is then rolled back here).
const (
	errDeadlock        = 1213
	errLockWaitTimeout = 1205
)

// attempts bounds the runs of one statement or transaction that InnoDB
// refused for a deadlock or a lock wait; past it the error is returned and
// the flow answers 503, so the client's retry finds out.
const attempts = 4

// retryable reports whether err is a deadlock or a lock wait timeout.
func retryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == errDeadlock || me.Number == errLockWaitTimeout)
}

// retry runs fn until it succeeds, fails otherwise, ctx ends or it was
// refused attempts times; a short, growing pause between runs lets the
// transaction that won the lock finish.
func retry(ctx context.Context, fn func() error) error {
	var err error
	for i := range attempts {
		if err = fn(); !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(i+1) * 5 * time.Millisecond):
		}
	}
	return err
}

// exec runs one statement (autocommit) with retry and returns the rows it
// changed.
func (s *Store) exec(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := retry(ctx, func() error {
		res, err := s.db.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// inTx runs fn in a READ COMMITTED transaction (the isolation at which a
// locking read reads the latest committed row and locks only the rows it
// returns) and commits it, retrying the whole transaction when InnoDB
// refused a statement.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return retry(ctx, func() error {
		tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}
