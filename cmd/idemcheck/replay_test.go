package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeIncidents writes files (path below dir → content) into a new
// directory and returns it.
func writeIncidents(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const reusedKey = `name: reused
family: key-reuse
target: no-fingerprint
steps:
  - send: {id: first, client: 0, replica: 0, tenant: 0, key: k1, order: o1, amount: 1250}
  - send: {id: other, client: 0, replica: 1, tenant: 0, key: k1, order: o2, amount: 4200}
expect:
  - {check: P1, verdict: FAILED}
`

// TestCLI_ReplayAllRefusesBadFilesFirst: replay --all loads every file
// before it starts anything; a bad one is exit 2 naming file:line.
func TestCLI_ReplayAllRefusesBadFilesFirst(t *testing.T) {
	cases := []struct {
		files map[string]string
		args  []string
		want  string
	}{
		{map[string]string{"a.yaml": reusedKey, "public/b.yaml": reusedKey}, nil, "public/b.yaml: source: expected the public thread"},
		{map[string]string{"public/b.yaml": "source: a/b\n" + reusedKey}, nil, "public/b.yaml:1: source: expected a GitHub thread as owner/repo#N"},
		{map[string]string{"public/b.yaml": "source: a/b#1\n" + strings.Replace(reusedKey, "no-fingerprint", "no-such-member", 1)}, []string{"--target", "reference"}, "public/b.yaml:4: target: expected a built-in member"},
		{map[string]string{"a.yaml": strings.Replace(reusedKey, "no-fingerprint", "payments", 1)}, nil, "a.yaml:3: target: expected a built-in member"},
		{map[string]string{"a.yaml": strings.Replace(reusedKey, "P1", "P9", 1)}, nil, "a.yaml:8: expect[0].check: expected one of"},
		{map[string]string{"notes.txt": "x"}, nil, "no incident files"},
	}
	for _, c := range cases {
		dir := writeIncidents(t, c.files)
		code, stdout, stderr := runCLI(t, append([]string{"replay", "--all", dir}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and %q before any replay", c.files, code, stderr, stdout, c.want)
		}
	}
	if code, _, stderr := runCLI(t, "replay", "--all", filepath.Join(t.TempDir(), "none")); code != exitUsage || !strings.Contains(stderr, "expected a directory of incident files") {
		t.Errorf("missing directory: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, "replay", t.TempDir()); code != exitUsage || !strings.Contains(stderr, "is a directory: replay --all") {
		t.Errorf("a directory without --all: exit %d, %q", code, stderr)
	}
}

// TestCLI_ReplayAllOneVerdictEach replays a directory against the
// incidents' own members (reproduced: the verdict's exit, 1), then
// against the reference (every incident passes: exit 0).
func TestCLI_ReplayAllOneVerdictEach(t *testing.T) {
	needPostgres(t)
	dir := writeIncidents(t, map[string]string{"public/reused.yaml": "source: nensii21/devlink#1195\n" + reusedKey})
	code, stdout, stderr := idemcheck(t, dir, "replay", "--all", ".")
	if code != exitFail || !strings.Contains(stdout, "reproduced") || !strings.Contains(stdout, "public/reused.yaml") ||
		!strings.Contains(stdout, "1 of 1 incidents reproduced against their own members (0 not reproduced, 0 undecided)") {
		t.Fatalf("own members: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = idemcheck(t, dir, "replay", "--all", ".", "--target", "reference")
	if code != exitPass || !strings.Contains(stdout, "PASS") || !strings.Contains(stdout, "1 incidents against reference: 0 FAILED, 1 passed, 0 undecided") {
		t.Fatalf("reference: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestReplayAll_WorstExitWins: not reproduced outranks undecided, which
// outranks FAILED.
func TestReplayAll_WorstExitWins(t *testing.T) {
	cases := []struct {
		codes []int
		want  int
	}{
		{[]int{exitPass, exitPass}, exitPass},
		{[]int{exitPass, exitFail}, exitFail},
		{[]int{exitFail, exitEnv, exitPass}, exitEnv},
		{[]int{exitEnv, exitNotReproduced, exitFail}, exitNotReproduced},
	}
	for _, c := range cases {
		var tl tally
		for _, code := range c.codes {
			tl.add(code)
		}
		if got := codeOf(tl.exit()); got != c.want {
			t.Errorf("%v: exit %d, want %d", c.codes, got, c.want)
		}
	}
}

func TestPositionalFirst(t *testing.T) {
	got := strings.Join(positionalFirst([]string{"--all", "dir", "--target", "x"}, "all"), " ")
	if got != "dir --all --target x" {
		t.Fatalf("got %q", got)
	}
}
