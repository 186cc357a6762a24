package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/search"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	code = report(err, &errb)
	return code, out.String(), errb.String()
}

func TestCLI_UsageErrorsExit2(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nstart: {command: ./s}\npolicy:\n  ttl: 1h\n  max_wait: soon\n"), 0o644)
	short := filepath.Join(t.TempDir(), "short.yaml")
	os.WriteFile(short, []byte("name: x\nstart: {command: ./s}\npolicy:\n  ttl: 1s\n  recovery_window: 30s\n"), 0o644)
	xml := filepath.Join(t.TempDir(), "xml.yaml")
	os.WriteFile(xml, []byte("name: x\nstart: {command: ./s}\npolicy: {ttl: 2s}\nprotocol:\n  encoding: xml\n"), 0o644)
	noOrder := filepath.Join(t.TempDir(), "no-order.yaml")
	os.WriteFile(noOrder, []byte("name: x\nstart: {command: ./s}\npolicy: {ttl: 2s}\nprotocol:\n  path: /payments\n  body:\n    amount: \"{{.Amount}}\"\n    currency: \"{{.Currency}}\"\n"), 0o644)
	badIncident := filepath.Join(t.TempDir(), "inc.yaml")
	os.WriteFile(badIncident, []byte("name: x\nsteps:\n  - fault: {id: f, kind: earthquake}\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"certify", "--target", bad}, "bad.yaml:5: policy.max_wait: expected a duration"},
		{[]string{"certify", "--target", "no-such-target"}, `unknown built-in target "no-such-target"`},
		{[]string{"certify", "--target", xml}, `xml.yaml:5: protocol.encoding: expected json or form, got "xml"`},
		{[]string{"certify", "--target", noOrder}, "no-order.yaml:6: protocol.body: the request never names the payment's order id"},
		{[]string{"certify", "--target", short, "--families", "crash-window"}, "short.yaml:5: policy.recovery_window: no crash point fits: a crash-window retry"},
		{[]string{"certify", "--target", "reference", "--families", "earthquakes"}, `--families: unknown family "earthquakes"`},
		{[]string{"certify", "--target", "reference", "--level", "L9"}, "--level: expected L1 to L5"},
		{[]string{"certify", "--target", "reference", "--shard", "9/8"}, "--shard: expected k/n"},
		{[]string{"certify", "--target", "reference", "--budget", "-1s"}, "--budget: expected a positive duration"},
		{[]string{"certify"}, "--target is required"},
		{[]string{"run", "nonsense", "--target", "reference"}, `unknown family "nonsense"`},
		{[]string{"replay", badIncident}, "inc.yaml:3: steps[0].fault.kind: expected one of"},
		{[]string{"certify", "--no-such-flag"}, "flag provided but not defined"},
		{[]string{"merge"}, "merge: expected one or more report directories"},
		{[]string{"merge", filepath.Join(t.TempDir(), "none")}, "report.json"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

func TestCLI_HelpExits0WithExample(t *testing.T) {
	for _, cmd := range []string{"certify", "run", "replay", "list", "demo", "merge", "version"} {
		code, _, stderr := runCLI(t, cmd, "--help")
		if code != exitPass || !strings.Contains(stderr, "Example:") || !strings.Contains(stderr, "idemcheck "+cmd) {
			t.Errorf("%s --help: exit %d, output %q", cmd, code, stderr)
		}
	}
}

func TestCLI_ListJSON(t *testing.T) {
	code, stdout, _ := runCLI(t, "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var l listing
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, tg := range l.Targets {
		kinds[tg.Kind]++
		if tg.Kind == "broken" && len(tg.Expect) == 0 {
			t.Errorf("zoo member %s lists no invariant it must violate", tg.Name)
		}
	}
	if kinds["reference"] != 1 || kinds["broken"] < 10 || kinds["garden"] < 4 || len(l.Families) < 7 || len(l.Incidents) < 6 {
		t.Fatalf("listing: %v targets by kind, %d families, %d incidents", kinds, len(l.Families), len(l.Incidents))
	}
	public := 0
	for _, in := range l.Incidents {
		if in.Public {
			public++
			if in.Source == "" || !strings.HasPrefix(in.File, "scenarios/incidents/public/") {
				t.Errorf("public incident %s lists no source", in.File)
			}
		}
	}
	if public == 0 {
		t.Error("the listing shows no public incident")
	}
}

// TestCLI_ExitCodesEndToEnd runs the real binary: a zoo member exits 1,
// the reference exits 0, and a report directory is written either way.
func TestCLI_ExitCodesEndToEnd(t *testing.T) {
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(m) == 0 && os.Getenv("PG_BIN") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no PostgreSQL server binaries on CI")
		}
		t.Skip("no PostgreSQL server binaries: install postgresql or set PG_BIN")
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/idemcheck/idemcheck/cmd/...").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cases := []struct {
		target, family string
		code           int
	}{{"naive", "concurrent-duplicates", 1}, {"reference", "protocol", 0}}
	for _, c := range cases {
		dir := t.TempDir()
		cmd := exec.Command(filepath.Join(bin, "idemcheck"), "run", c.family, "--target", c.target, "--budget", "12s", "--report-dir", dir)
		cmd.Env = append(os.Environ(), "CI=true")
		out, _ := cmd.CombinedOutput()
		if got := cmd.ProcessState.ExitCode(); got != c.code {
			t.Errorf("%s: exit %d, want %d\n%s", c.target, got, c.code, out)
		}
		for _, f := range []string{"report.json", "junit.xml", "summary.md", "index.html"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s: %s not written: %v", c.target, f, err)
			}
		}
	}
}

func TestCLI_MergeShards(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	for i, verdict := range []string{"PASS", "FAILED"} {
		rep := &reports.Report{SchemaVersion: reports.SchemaVersion, Target: "t", Level: "L5", Complete: true, Verdict: "pass",
			Families: []reports.FamilyResult{{Name: "protocol", Verdict: verdict, Scenarios: 5}},
			Checks:   []reports.Check{{ID: "M1", Name: "no double charge", Family: "protocol", Level: "L1", Verdict: verdict, Exercised: true}}}
		if _, err := reports.WriteAll(dirs[i], rep); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "merge", "--report-dir", out, dirs[0], dirs[1])
	if code != exitFail || !strings.Contains(stdout, "t: FAILED (level L5) over 2 shards") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	merged, err := reports.ReadDir(out)
	if err != nil || merged.Families[0].Scenarios != 10 {
		t.Fatalf("merged report: %v %+v", err, merged)
	}
}

// TestReplayExit_UnknownIsNeverZero: a replay that could not decide exits 3.
func TestReplayExit_UnknownIsNeverZero(t *testing.T) {
	for v, want := range map[checker.Verdict]int{checker.Pass: exitPass, checker.NonStrict: exitPass, checker.Unknown: exitEnv, checker.Failed: exitFail} {
		sc := &scenarios.Scenario{Name: "x", Target: "elsewhere"}
		err := replayExit("t", sc, &search.Example{Scenario: *sc, Result: checker.Result{Verdict: v}})
		got := exitPass
		var ee *exitError
		if errors.As(err, &ee) {
			got = ee.code
		}
		if got != want {
			t.Errorf("%s: exit %d, want %d", v, got, want)
		}
	}
}
