package mysqlstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/mysqltest"
	"github.com/idemcheck/idemcheck/reference/mysqlstore"
)

// Whatever the DSN says, the store runs with the settings its statements
// rely on: affected rows are rows changed (Claim), times are UTC and cut
// to the microsecond DATETIME(6) keeps.
func TestConfig_OverridesWhatTheStatementsRelyOn(t *testing.T) {
	cfg, err := mysqlstore.Config("root@tcp(127.0.0.1:1)/db?clientFoundRows=true&loc=Local&parseTime=false")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientFoundRows || cfg.Loc != time.UTC || !cfg.ParseTime || !cfg.CheckConnLiveness ||
		cfg.Params["innodb_lock_wait_timeout"] == "" || cfg.Timeout == 0 {
		t.Fatalf("config %+v", cfg)
	}
	if _, err := mysqlstore.Config("not a dsn"); err == nil {
		t.Fatal("a bad DSN was accepted")
	}
}

// Replicas starting together may all migrate at once; the table is
// created once and a second migration is a no-op.
func TestMigrate_ConcurrentReplicas(t *testing.T) {
	db, err := mysqlstore.Open(mysqltest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if err := mysqlstore.Migrate(context.Background(), db); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := mysqlstore.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	var engine, collation string
	if err := db.QueryRowContext(t.Context(), `SELECT engine, table_collation FROM information_schema.tables
		WHERE table_schema = DATABASE() AND table_name = 'idempotency_keys'`).Scan(&engine, &collation); err != nil {
		t.Fatal(err)
	}
	if engine != "InnoDB" || collation != "utf8mb4_bin" {
		t.Fatalf("table is %s, %s", engine, collation)
	}
}
