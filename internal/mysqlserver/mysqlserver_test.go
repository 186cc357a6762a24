package mysqlserver_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/idemcheck/idemcheck/internal/mysqlserver"
)

// TestServer_PersistsAcrossRestart: a committed row survives a graceful
// restart on the same address; Close removes the directory.
func TestServer_PersistsAcrossRestart(t *testing.T) {
	ctx := context.Background()
	s, err := mysqlserver.Start(ctx, mysqlserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateDatabase(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDatabase(ctx, "bad-name"); err == nil {
		t.Fatal("a database name with '-' was accepted")
	}
	exec := func(q string) {
		db, err := sql.Open("mysql", s.DSN("d1"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE TABLE t (k VARCHAR(64) PRIMARY KEY) ENGINE=InnoDB")
	exec("INSERT INTO t VALUES ('a')")
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	db, _ := sql.Open("mysql", s.DSN("d1"))
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after restart: %d rows, %v", n, err)
	}
	dir := s.Dir()
	db.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("dir %s still there: %v", dir, err)
	}
}
