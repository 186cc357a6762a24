// Package pgtest gives tests a fresh PostgreSQL database: DATABASE_URL when
// it is set, otherwise a database in one throwaway cluster shared by the
// whole test binary (started on first use, stopped by Main). It imports
// internal/pgcluster and internal/shared; only tests import it.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/pgcluster"
	"github.com/idemcheck/idemcheck/internal/shared"
)

var (
	cluster = shared.Server[*pgcluster.Cluster]{Name: "pgtest", Timeout: 90 * time.Second,
		Start: func(ctx context.Context) (*pgcluster.Cluster, error) {
			return pgcluster.Start(ctx, pgcluster.Options{})
		},
		Close: func(c *pgcluster.Cluster) { c.Stop() }}
	seq atomic.Int64
)

// Main runs the tests and then stops the shared cluster, if one was started.
// Call it from TestMain: `func TestMain(m *testing.M) { pgtest.Main(m) }`.
func Main(m *testing.M) { shared.Main(m, Stop) }

// Stop stops the shared cluster; later calls to URL start a new one.
func Stop() { cluster.Stop() }

// Cluster returns the shared cluster, starting it on first use. Tests that
// need the cluster itself (pgbench, a second database) use it.
func Cluster(tb testing.TB) *pgcluster.Cluster {
	tb.Helper()
	return cluster.Get(tb)
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
