// Package redistest gives tests a throwaway Redis shared by the whole test
// binary (started on first use, stopped by Main) and a logical database of
// their own in it. It imports only internal/redisserver; only tests import
// it.
package redistest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/redisserver"
)

var (
	mu     sync.Mutex
	server *redisserver.Server
	next   int // the next logical database to hand out
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
		server, next = nil, 0
	}
}

// Server returns the shared server, starting it on first use.
func Server(tb testing.TB) *redisserver.Server {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if server == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		s, err := redisserver.Start(ctx, redisserver.Options{})
		if err != nil {
			tb.Fatalf("redistest: %v", err)
		}
		server = s
	}
	return server
}

// URL is a redis:// URL of a logical database no other test of this
// binary uses (Redis has 16; past them tests share, with fresh keys).
func URL(tb testing.TB) string {
	tb.Helper()
	s := Server(tb)
	mu.Lock()
	db := next % 16
	next++
	mu.Unlock()
	return fmt.Sprintf("redis://%s/%d", s.Addr(), db)
}
