package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	builtDir  string
	buildErr  error
	buildOut  []byte
)

// TestMain removes the binaries built for the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// binaries builds idemcheck and reference-server once per test binary and
// returns their directory.
func binaries(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		builtDir, buildErr = os.MkdirTemp("", "idemcheck-cli-test-")
		if buildErr == nil {
			buildOut, buildErr = exec.Command("go", "build", "-o", builtDir, "github.com/idemcheck/idemcheck/cmd/...").CombinedOutput()
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return builtDir
}

// needPostgres skips a test that starts PostgreSQL when its server
// binaries are missing, except on CI, where that is a failure.
func needPostgres(t testing.TB) {
	t.Helper()
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(m) == 0 && os.Getenv("PG_BIN") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no PostgreSQL server binaries on CI")
		}
		t.Skip("no PostgreSQL server binaries: install postgresql or set PG_BIN")
	}
}

// idemcheck runs the built binary in dir with args and returns its exit
// code, stdout and stderr.
func idemcheck(t testing.TB, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return idemcheckEnv(t, dir, nil, args...)
}

// idemcheckEnv is idemcheck with extra environment variables.
func idemcheckEnv(t testing.TB, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binaries(t), "idemcheck"), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "CI=true"), env...)
	var out, errb safeBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("idemcheck %v: %v", args, err)
		}
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// safeBuffer is a bytes.Buffer for exec's copying goroutines.
type safeBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
