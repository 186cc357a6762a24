package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_NumericFlagsRangeChecked: every numeric flag out of range is
// exit 2 naming the flag, before anything starts.
func TestCLI_NumericFlagsRangeChecked(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"certify", "--target", "reference", "--replicas", "-3"}, "--replicas: expected 0"},
		{[]string{"certify", "--target", "reference", "--replicas", "99"}, "--replicas: expected 0"},
		{[]string{"run", "protocol", "--target", "reference", "--replicas", "-1"}, "--replicas"},
		{[]string{"certify", "--target", "reference", "--seed", "0"}, "--seed: expected a seed of 1 or more"},
		{[]string{"certify", "--target", "reference", "--seed", "-2"}, "-seed"},
		{[]string{"certify", "--target", "reference", "--budget", "0s"}, "--budget: expected a positive duration"},
		{[]string{"certify", "--target", "reference", "--budget", "9999h"}, "--budget: expected a positive duration"},
		{[]string{"certify", "--target", "reference", "--redis-appendfsync", "sometimes"}, `--redis-appendfsync: expected one of always, everysec, no, got "sometimes"`},
		{[]string{"certify", "--target", "reference", "--shard", "0/8"}, "--shard"},
		{[]string{"certify", "--target", "reference", "--shard", "1/0"}, "--shard"},
		{[]string{"demo", "--seed", "0"}, "--seed"},
		{[]string{"certify", "--target", "reference", "--gateway-idempotency", "maybe"}, "expected on or off, got \"maybe\""},
		{[]string{"run", "crash-window", "--target", "reference", "--gateway-idempotency", "off"}, "--gateway-idempotency off: every family chosen ([crash-window]) crashes servers"},
		{[]string{"certify", "--target", "reference", "--families", "crash-window,mixed", "--gateway-idempotency", "off"}, "nothing to run"},
	}
	for _, c := range cases {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// TestCLI_EnvironmentErrorPrintedOnce: a server that cannot start is exit
// 3 with its error on stderr, once, and not again on stdout.
func TestCLI_EnvironmentErrorPrintedOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "broken.yaml")
	os.WriteFile(file, []byte(`name: broken
start: {command: /bin/false}
ready: {path: /healthz, timeout: 5s}
policy: {ttl: 2s, retry_window: 2s, recovery_window: 2s, max_wait: 1s}
`), 0o644)
	code, stdout, stderr := idemcheck(t, dir, "certify", "--target", file, "--budget", "5s", "--report-dir", filepath.Join(dir, "out"))
	const msg = "environment could not be set up"
	if code != exitEnv {
		t.Fatalf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout+stderr, msg); n != 1 || !strings.Contains(stderr, msg) {
		t.Errorf("%q printed %d times (want once, on stderr)\nstdout:\n%s\nstderr:\n%s", msg, n, stdout, stderr)
	}
	if n := strings.Count(stdout+stderr, "exited during start-up"); n != 2 { // once per replica
		t.Errorf("replica start-up failures printed %d times, want 2 (one per replica)\nstdout:\n%s\nstderr:\n%s", n, stdout, stderr)
	}
}

// TestCLI_InstallFailureExits3: a target whose install step fails stops
// before anything starts, with exit 3 and the step's command and output.
func TestCLI_InstallFailureExits3(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "unbuilt.yaml")
	os.WriteFile(file, []byte(`name: unbuilt
install: {command: sh, args: [-c, "echo no go.mod here; exit 1"]}
start: {command: ./srv}
policy: {ttl: 2s}
`), 0o644)
	code, stdout, stderr := idemcheck(t, dir, "certify", "--target", file, "--budget", "5s", "--report-dir", filepath.Join(dir, "out"))
	if code != exitEnv || !strings.Contains(stderr, "install step of unbuilt (sh -c") || !strings.Contains(stderr, "no go.mod here") {
		t.Fatalf("exit %d, want 3 naming the install step and its output\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Errorf("a report folder was made although nothing started")
	}
}

// TestCLI_ReplayNotReproducedExits4: an incident whose expected verdicts
// do not hold against its own target is exit 4, not 0.
func TestCLI_ReplayNotReproducedExits4(t *testing.T) {
	needPostgres(t)
	dir := t.TempDir()
	inc := filepath.Join(dir, "incident.yaml")
	os.WriteFile(inc, []byte(`name: not-a-bug
family: concurrent-duplicates
target: reference
description: the reference never double-charges, so this cannot reproduce
steps:
  - send: {id: a, client: 0, replica: 0, tenant: 0, key: k1, order: o1, amount: 1250}
  - send: {id: b, client: 0, replica: 1, tenant: 0, key: k1, order: o1, amount: 1250}
expect:
  - {check: M1, verdict: FAILED}
`), 0o644)
	code, stdout, stderr := idemcheck(t, dir, "replay", inc)
	if code != exitNotReproduced || !strings.Contains(stdout, "NOT reproduced: M1: expected FAILED, got PASS") || !strings.Contains(stderr, "not reproduced") {
		t.Fatalf("exit %d, want 4\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// The same incident against another target compares no expectations:
	// the verdict decides, as for certify.
	code, stdout, stderr = idemcheck(t, dir, "replay", inc, "--target", "no-fingerprint")
	if code != exitPass {
		t.Fatalf("against another target: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestCLI_ReplayHasDocker: replay takes --docker and
// --gateway-idempotency like certify.
func TestCLI_ReplayHasDocker(t *testing.T) {
	code, _, stderr := runCLI(t, "replay", "--help")
	if code != exitPass || !strings.Contains(stderr, "-docker") || !strings.Contains(stderr, "-gateway-idempotency") {
		t.Fatalf("replay --help: exit %d, no --docker or --gateway-idempotency flag:\n%s", code, stderr)
	}
}
