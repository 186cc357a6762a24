// Package shared keeps one throwaway server for a whole test binary:
// started on first use, stopped at the end (from TestMain), started again
// if a test asks after a Stop. internal/pgtest, internal/redistest and
// internal/mysqltest are each one Server of it.
//
// It imports no idemcheck package; only test helpers import it.
package shared

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

// Server is a lazily started server of type T.
type Server[T any] struct {
	// Name prefixes a start error ("pgtest").
	Name string
	// Start starts the server; it is given Timeout.
	Start   func(ctx context.Context) (T, error)
	Timeout time.Duration
	// Close stops it and removes what it left.
	Close func(T)

	mu      sync.Mutex
	v       T
	running bool
}

// Get returns the server, starting it on first use; a start that fails
// fails the test.
func (s *Server[T]) Get(tb testing.TB) T {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
		defer cancel()
		v, err := s.Start(ctx)
		if err != nil {
			tb.Fatalf("%s: %v", s.Name, err)
		}
		s.v, s.running = v, true
	}
	return s.v
}

// Stop stops the server if it runs.
func (s *Server[T]) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		s.Close(s.v)
		var zero T
		s.v, s.running = zero, false
	}
}

// Main runs the tests, then stop (each helper's Stop), and exits with the
// tests' code: a helper's Main in one line.
func Main(m *testing.M, stop func()) {
	code := m.Run()
	stop()
	os.Exit(code)
}
