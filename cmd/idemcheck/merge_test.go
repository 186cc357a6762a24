package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
)

// A shard whose report.json is broken is refused with exit 2, naming the
// file and the line.
func TestCLI_MergeBrokenReportNamesFileLine(t *testing.T) {
	shard := t.TempDir()
	os.WriteFile(filepath.Join(shard, "report.json"), []byte("{\"schema_version\": 1,\n \"target\": \"x\",\n \"budget\": \"soon\"}\n"), 0o644)
	code, _, stderr := runCLI(t, "merge", "--report-dir", t.TempDir(), shard)
	want := filepath.Join(shard, "report.json") + `:3: time: invalid duration "soon"`
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
}

// TestCLI_MergeExercisedCheckHasNoNotExercisedNote: `idemcheck merge` of
// two shards, where one shard's examples exercised E2 and the other's did
// not, writes E2 exercised, with no "not exercised" note beside it, in
// report.json and in the summary, whichever shard comes first.
func TestCLI_MergeExercisedCheckHasNoNotExercisedNote(t *testing.T) {
	write := func(level string, c reports.Check) string {
		dir := t.TempDir()
		r := &reports.Report{SchemaVersion: reports.SchemaVersion, Target: "t", Verdict: "pass", Level: level, Complete: true,
			Families: []reports.FamilyResult{{Name: "late-retry", Verdict: "PASS", Scenarios: 4, Seeds: 4}},
			Checks:   []reports.Check{c}}
		if _, err := reports.WriteAll(dir, r); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	missed := write("L4", reports.Check{ID: "E2", Name: "retry window covered", Family: "late-retry", Level: "L5", Verdict: "PASS",
		Note: "not exercised: no retry went past the TTL (2s)"})
	judged := write("L5", reports.Check{ID: "E2", Name: "retry window covered", Family: "late-retry", Level: "L5", Verdict: "PASS", Exercised: true,
		Note: "judged 3 definitive answers to retries sent in (TTL 2s, retry window 10s]"})
	for _, shards := range [][]string{{missed, judged}, {judged, missed}} {
		out := t.TempDir()
		if code, stdout, stderr := runCLI(t, append([]string{"merge", "--report-dir", out}, shards...)...); code != exitPass {
			t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
		}
		m, err := reports.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		if c := m.Checks[0]; len(m.Checks) != 1 || !c.Exercised || strings.Contains(c.Note, "not exercised") {
			t.Errorf("merged E2: %+v", m.Checks)
		}
		summary, _ := os.ReadFile(filepath.Join(out, reports.MarkdownFile))
		for _, line := range strings.Split(string(summary), "\n") {
			if strings.Contains(line, "E2") && strings.Contains(line, "not exercised") {
				t.Errorf("summary.md: %s", line)
			}
		}
	}
}
