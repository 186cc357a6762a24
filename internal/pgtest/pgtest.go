// Package pgtest gives tests a fresh PostgreSQL database: DATABASE_URL when
// it is set, otherwise a database in one throwaway cluster shared by the
// whole test binary (started on first use, stopped by Main). It imports
// only internal/pgcluster; only tests import it.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/pgcluster"
)

var (
	mu      sync.Mutex
	cluster *pgcluster.Cluster
	seq     atomic.Int64
)

// Main runs the tests and then stops the shared cluster, if one was started.
// Call it from TestMain: `func TestMain(m *testing.M) { pgtest.Main(m) }`.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the shared cluster; later calls to URL start a new one.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if cluster != nil {
		cluster.Stop()
		cluster = nil
	}
}

// Cluster returns the shared cluster, starting it on first use. Tests that
// need the cluster itself (pgbench, a second database) use it.
func Cluster(tb testing.TB) *pgcluster.Cluster {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if cluster == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		c, err := pgcluster.Start(ctx, pgcluster.Options{})
		if err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
		cluster = c
	}
	return cluster
}

// URL returns the URL of a database no other test uses. With DATABASE_URL
// set, that database is shared: tests must then use fresh keys and tenants,
// which every idemcheck test does anyway.
func URL(tb testing.TB) string {
	tb.Helper()
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	c := Cluster(tb)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), seq.Add(1))
	u, err := c.CreateDatabase(context.Background(), name)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	return u
}
