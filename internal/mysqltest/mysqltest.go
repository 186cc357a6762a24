// Package mysqltest gives tests a throwaway MariaDB shared by the whole
// test binary (started on first use, stopped by Main) and a fresh database
// in it per call. It imports only internal/mysqlserver; only tests import
// it.
package mysqltest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/mysqlserver"
)

var (
	mu     sync.Mutex
	server *mysqlserver.Server
	seq    atomic.Int64
)

// Main runs the tests and then stops the shared server, if one was
// started. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the shared server; a later Server starts a new one.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if server != nil {
		server.Close()
		server = nil
	}
}

// Server returns the shared server, starting it on first use.
func Server(tb testing.TB) *mysqlserver.Server {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if server == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		s, err := mysqlserver.Start(ctx, mysqlserver.Options{})
		if err != nil {
			tb.Fatalf("mysqltest: %v", err)
		}
		server = s
	}
	return server
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
