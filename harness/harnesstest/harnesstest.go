// Package harnesstest holds test fixtures for packages that drive a
// harness.Env (harness/process, faults, scenarios, certify): a small
// system under test built from harness/testdata/testserver, a target for
// it, and Env start-up with cleanup. Like net/http/httptest it is a test
// helper package and the only place in the harness tree where *testing.T
// appears. It imports harness, harness/process and target; only tests
// import it.
package harnesstest

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/target"
)

// testServerPkg is the test server's import path; `go build` accepts a
// testdata package when it is named explicitly.
const testServerPkg = "github.com/idemcheck/idemcheck/harness/testdata/testserver"

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// Main runs the tests and removes the test server binary afterwards. Call
// it from TestMain: `func TestMain(m *testing.M) { harnesstest.Main(m) }`.
func Main(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// Cleanup removes the test server binary; Main calls it, a TestMain that
// has more to stop calls it itself.
func Cleanup() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// TestServer builds the test server once per test binary and returns the
// binary's path.
func TestServer(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "idemcheck-testserver-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "testserver")
		out, err := exec.Command("go", "build", "-o", buildBin, testServerPkg).CombinedOutput()
		if err != nil {
			buildErr = errors.New("build test server: " + err.Error() + ": " + string(out))
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return buildBin
}

// Target describes the test server as a target. env adds environment
// variables (the TESTSERVER_* knobs); postgres says whether it needs a
// database.
func Target(tb testing.TB, postgres bool, env map[string]string) *target.Target {
	t := &target.Target{
		Name:   "testserver",
		Start:  target.Start{Command: TestServer(tb), Env: env},
		Ready:  target.Ready{Path: "/healthz", Timeout: 20 * time.Second},
		Policy: target.Policy{TTL: time.Hour},
	}
	if postgres {
		t.Needs = []string{"postgres"}
	}
	return t
}

// Logger is a text logger to stderr when IDEMCHECK_TEST_LOG is set, and a
// discarding one otherwise (a logger that calls t.Log panics when a
// goroutine logs after the test ended).
func Logger() *slog.Logger {
	if os.Getenv("IDEMCHECK_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Start starts an Env and closes it when the test ends.
func Start(tb testing.TB, t *target.Target, opts harness.Options) *process.Env {
	tb.Helper()
	if opts.Logger == nil {
		opts.Logger = Logger()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	env, err := process.Start(ctx, t, opts)
	if err != nil {
		tb.Fatalf("start env: %v", err)
	}
	tb.Cleanup(func() {
		if err := env.Close(); err != nil {
			tb.Errorf("close env: %v", err)
		}
	})
	return env
}

// StartPrepared starts an Env as Start does and returns it with t's
// defaults filled in (harness.Prepare), as certify has them for a Runner.
func StartPrepared(tb testing.TB, t *target.Target, opts harness.Options) (*process.Env, *target.Target) {
	tb.Helper()
	env := Start(tb, t, opts)
	t, err := harness.Prepare(t, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return env, t
}

// Alive reports whether pid is a live process: it exists and is not a
// zombie (a container's PID 1 may never reap orphans, and a zombie holds
// no resources).
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// WaitUntil polls cond until it holds or d passes; it reports whether cond
// held. A bounded wait on a condition, never a sleep.
func WaitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// DateOffset is how far a server's HTTP Date header (GET url) is from
// this machine's clock, to the header's second: a clock fault's effect as
// a client sees it.
func DateOffset(tb testing.TB, url string) time.Duration {
	tb.Helper()
	before := time.Now()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	d, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		tb.Fatalf("Date %q: %v", resp.Header.Get("Date"), err)
	}
	return d.Sub(before.Truncate(time.Second))
}
