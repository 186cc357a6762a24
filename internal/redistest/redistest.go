// Package redistest gives tests a throwaway Redis shared by the whole test
// binary (started on first use, stopped by Main) and a logical database of
// their own in it. It imports internal/redisserver and internal/shared; only tests import
// it.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/redisserver"
	"github.com/idemcheck/idemcheck/internal/shared"
)

var (
	server = shared.Server[*redisserver.Server]{Name: "redistest", Timeout: time.Minute,
		Start: func(ctx context.Context) (*redisserver.Server, error) {
			return redisserver.Start(ctx, redisserver.Options{})
		},
		Close: func(s *redisserver.Server) { s.Close() }}
	mu   sync.Mutex
	next int // the next logical database to hand out
)

// Main runs the tests and then stops the shared server, if one was
// started. Call it from TestMain.
func Main(m *testing.M) { shared.Main(m, Stop) }

// Stop stops the shared server; a later Server starts a new one.
func Stop() {
	server.Stop()
	mu.Lock()
	next = 0
	mu.Unlock()
}

// Server returns the shared server, starting it on first use.
func Server(tb testing.TB) *redisserver.Server {
	tb.Helper()
	return server.Get(tb)
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

// Do sends one command to addr on a fresh connection and returns the
// first line of the reply, or the value of a bulk string ("+OK", "v",
// "$-1" for none): enough for a test to write and read a key through a
// link, with no client library.
func Do(addr string, args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(conn, "$%d\r\n%s\r\n", len(a), a)
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err == nil && strings.HasPrefix(line, "$") && line != "$-1\r\n" {
		line, err = r.ReadString('\n')
	}
	return strings.TrimSpace(line), err
}
