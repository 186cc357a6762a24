package redisserver_test

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/redisserver"
	"github.com/idemcheck/idemcheck/internal/redistest"
)

// do sends one command and returns the first line of the answer.
func do(t *testing.T, addr string, args ...string) string {
	t.Helper()
	got, err := redistest.Do(addr, args...)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestServer_PersistsAcrossRestart: a write acknowledged before a graceful
// restart is there after it (appendonly), on the same address; Close
// removes the directory and the process.
func TestServer_PersistsAcrossRestart(t *testing.T) {
	ctx := context.Background()
	s, err := redisserver.Start(ctx, redisserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := do(t, s.Addr(), "SET", "k", "v"); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	pid := s.PID()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if s.PID() == pid || s.PID() == 0 {
		t.Fatalf("pid %d after restart, %d before", s.PID(), pid)
	}
	if got := do(t, s.Addr(), "GET", "k"); got != "v" {
		t.Fatalf("after restart GET k = %q, want v", got)
	}
	dir, last := s.Dir(), s.PID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("dir %s still there: %v", dir, err)
	}
	if err := syscall.Kill(last, 0); err == nil {
		t.Fatalf("redis pid %d still running after Close", last)
	}
}

// TestServer_KillThenLaunch: SIGKILL is a store crash; Launch brings the
// same server back on the same port.
func TestServer_KillThenLaunch(t *testing.T) {
	ctx := context.Background()
	s, err := redisserver.Start(ctx, redisserver.Options{AppendFsync: "always"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	do(t, s.Addr(), "SET", "k", "v")
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if s.PID() != 0 {
		t.Fatal("still running after Kill")
	}
	if err := s.Launch(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := do(t, s.Addr(), "GET", "k"); got != "v" {
		t.Fatalf("with appendfsync always, GET k after a crash = %q, want v", got)
	}
}

func TestStart_RefusesUnknownFsync(t *testing.T) {
	_, err := redisserver.Start(context.Background(), redisserver.Options{AppendFsync: "sometimes"})
	if err == nil || !strings.Contains(err.Error(), `appendfsync "sometimes": expected one of always, everysec, no`) {
		t.Fatalf("err = %v", err)
	}
}
