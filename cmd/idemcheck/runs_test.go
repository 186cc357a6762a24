package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/internal/leftovers"
)

// brokenTarget writes a target whose replicas exit at once: the
// environment fails fast, without PostgreSQL.
func brokenTarget(t *testing.T, dir string) string {
	t.Helper()
	file := filepath.Join(dir, "broken.yaml")
	os.WriteFile(file, []byte(`name: broken
start: {command: /bin/sh, args: ["-c", "echo broken server starting; echo no config >&2; exit 1"]}
ready: {path: /healthz, timeout: 5s}
policy: {ttl: 2s, retry_window: 2s, recovery_window: 2s, max_wait: 1s}
`), 0o644)
	return file
}

// TestCLI_ReplicaLogsKeptInReportFolder: the replicas' logs are kept in
// the report folder, the error names them there, and the HTML shows
// their tail.
func TestCLI_ReplicaLogsKeptInReportFolder(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, stdout, stderr := idemcheck(t, dir, "certify", "--target", brokenTarget(t, dir), "--budget", "5s", "--report-dir", out)
	if code != exitEnv {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	log := filepath.Join(out, "logs", "replica0.log")
	if !strings.Contains(stderr, "log "+log) {
		t.Errorf("the error does not name %s:\n%s", log, stderr)
	}
	data, err := os.ReadFile(log)
	if err != nil || !strings.Contains(string(data), "no config") {
		t.Fatalf("replica log not kept: %v %q", err, data)
	}
	html, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if !strings.Contains(string(html), `href="logs/replica0.log"`) || !strings.Contains(string(html), "no config") {
		t.Errorf("index.html neither links nor shows the replica log")
	}
}

// TestCLI_EachRunItsOwnFolder: without --report-dir, every run writes a
// new folder and idemcheck-report/<target>/latest points at the last one;
// a run starting removes the temporary folders of killed runs.
func TestCLI_EachRunItsOwnFolder(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	env := []string{"TMPDIR=" + tmp}
	dead := filepath.Join(tmp, "idemcheck-pg-123")
	os.MkdirAll(filepath.Join(dead, "data"), 0o755)
	os.WriteFile(filepath.Join(dead, leftovers.PIDFile), []byte(strconv.Itoa(deadPID(t))), 0o644)
	live := filepath.Join(tmp, "idemcheck-env-456")
	os.MkdirAll(live, 0o755)
	leftovers.Mark(live) // this test process: alive

	file := brokenTarget(t, dir)
	var runs []string
	for range 2 {
		code, stdout, stderr := idemcheckEnv(t, dir, env, "certify", "--target", file, "--budget", "5s")
		if code != exitEnv {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		m := strings.Fields(stdout[strings.Index(stdout, "report: "):])
		runs = append(runs, m[1])
	}
	if runs[0] == runs[1] || !strings.HasPrefix(runs[0], "idemcheck-report/broken/") {
		t.Fatalf("two runs, reports %v: want two folders under idemcheck-report/broken/", runs)
	}
	for _, r := range runs {
		if _, err := os.Stat(filepath.Join(dir, r)); err != nil {
			t.Errorf("report of an earlier run gone: %v", err)
		}
	}
	latest, err := os.Readlink(filepath.Join(dir, "idemcheck-report", "broken", "latest"))
	if err != nil || latest != filepath.Base(filepath.Dir(runs[1])) {
		t.Errorf("latest -> %q (%v), want the second run's folder %s", latest, err, filepath.Dir(runs[1]))
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a killed run's PostgreSQL folder is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live run's folder was removed: %v", err)
	}
}
