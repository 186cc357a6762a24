// Package mysqltest gives tests a throwaway MariaDB shared by the whole
// test binary (started on first use, stopped by Main) and a fresh database
// in it per call. It imports internal/mysqlserver and internal/shared; only tests import
// it.
package mysqltest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/mysqlserver"
	"github.com/idemcheck/idemcheck/internal/shared"
)

var (
	server = shared.Server[*mysqlserver.Server]{Name: "mysqltest", Timeout: 90 * time.Second,
		Start: func(ctx context.Context) (*mysqlserver.Server, error) {
			return mysqlserver.Start(ctx, mysqlserver.Options{})
		},
		Close: func(s *mysqlserver.Server) { s.Close() }}
	seq atomic.Int64
)

// Main runs the tests and then stops the shared server, if one was
// started. Call it from TestMain.
func Main(m *testing.M) { shared.Main(m, Stop) }

// Stop stops the shared server; a later Server starts a new one.
func Stop() { server.Stop() }

// Server returns the shared server, starting it on first use.
func Server(tb testing.TB) *mysqlserver.Server {
	tb.Helper()
	return server.Get(tb)
}

// DSN is the go-sql-driver DSN of a database no other test uses.
func DSN(tb testing.TB) string {
	tb.Helper()
	s := Server(tb)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), seq.Add(1))
	if err := s.CreateDatabase(context.Background(), name); err != nil {
		tb.Fatalf("mysqltest: %v", err)
	}
	return s.DSN(name)
}
