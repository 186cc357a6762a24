package mysqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idemcheck/idemcheck/internal/mysqltest"
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/mysqlstore"
	"github.com/idemcheck/idemcheck/reference/storetest"
)

// lockWaits is the server's count of row lock waits.
func lockWaits(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var name string
	var n int64
	if err := db.QueryRowContext(t.Context(), "SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_waits'").Scan(&name, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// lockedKey is a store whose lock wait timeout is a second, holding a
// claim whose row another transaction (holder) has locked.
func lockedKey(t *testing.T) (*mysqlstore.Store, reference.Claim, *sql.Tx) {
	t.Helper()
	db, err := mysqlstore.Open(mysqltest.DSN(t)+"&innodb_lock_wait_timeout=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := mysqlstore.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	s := mysqlstore.New(db)
	c := storetest.NewClaim("owner", time.Now(), time.Minute)
	storetest.MustClaim(t, s, c)
	holder, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Rollback() })
	if _, err := holder.ExecContext(t.Context(), "SELECT 1 FROM idempotency_keys WHERE tenant = ? AND key_hash = ? FOR UPDATE",
		c.Tenant, c.KeyHash); err != nil {
		t.Fatal(err)
	}
	return s, c, holder
}

// A write that waits on a row lock longer than the lock wait timeout
// (1205) is run again, and lands once the lock is let go.
func TestStore_LockWaitTimeoutIsRetried(t *testing.T) {
	s, c, holder := lockedKey(t)
	before := lockWaits(t, s.DB())
	done := make(chan error, 1)
	go func() {
		ok, err := s.Finish(context.Background(), c.Tenant, c.KeyHash, c.RequestID, storetest.Charged, c.Now)
		if err == nil && !ok {
			err = errors.New("the finish did not land")
		}
		done <- err
	}()
	storetest.Eventually(t, "the finish timed out on the lock and waited again", func() bool { return lockWaits(t, s.DB()) >= before+2 })
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the retried finish failed: %v", err)
	}
	if rec := storetest.Lookup(t, s, c); !rec.Terminal() {
		t.Fatalf("record %+v", rec)
	}
}

// Under a lock held for good, a write fails with the lock wait timeout
// after its bounded runs, instead of waiting forever.
func TestStore_LockWaitRetryIsBounded(t *testing.T) {
	s, c, _ := lockedKey(t)
	start := time.Now()
	err := s.Release(t.Context(), c.Tenant, c.KeyHash, c.RequestID, "owner", c.Now)
	took := time.Since(start)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1205 {
		t.Fatalf("a write under a lock held for good: %v, want error 1205", err)
	}
	if took < 2*time.Second || took > 30*time.Second {
		t.Fatalf("gave up after %v: want a few one-second waits", took)
	}
}
