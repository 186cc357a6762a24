package reports_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/reports"
)

// TestOverallVerdict_UndecidedIsNeverPass: every check PASS is not enough.
// A family that ended UNKNOWN (it did not fit its budget, its search
// stopped) or an incomplete history among those judged makes the run
// UNKNOWN (exit 3), unless something FAILED (exit 1).
func TestOverallVerdict_UndecidedIsNeverPass(t *testing.T) {
	pass := reports.Check{ID: "M1", Family: "f", Verdict: "PASS", Exercised: true}
	cases := []struct {
		name string
		edit func(r *reports.Report)
		want string
	}{
		{"clean", func(r *reports.Report) {}, "pass"},
		{"unknown family", func(r *reports.Report) { r.Families[0].Verdict = "UNKNOWN" }, "unknown"},
		{"unreadable family verdict", func(r *reports.Report) { r.Families[0].Verdict = "" }, "unknown"},
		{"incomplete history", func(r *reports.Report) { r.Coverage = checker.Coverage{Histories: 3, Incomplete: 1} }, "unknown"},
		{"unknown check", func(r *reports.Report) { r.Checks[0].Verdict = "UNKNOWN" }, "unknown"},
		{"interrupted run", func(r *reports.Report) { r.Complete = false }, "unknown"},
		{"failed family beats unknown", func(r *reports.Report) {
			r.Families = append(r.Families, reports.FamilyResult{Name: "g", Verdict: "FAILED"})
			r.Families[0].Verdict = "UNKNOWN"
		}, "fail"},
		{"failed check in an interrupted run", func(r *reports.Report) { r.Complete = false; r.Checks[0].Verdict = "FAILED" }, "fail"},
		{"non-strict family under --strict", func(r *reports.Report) { r.Strict = true; r.Families[0].Verdict = "NON-STRICT" }, "fail"},
		{"non-strict family", func(r *reports.Report) { r.Families[0].Verdict = "NON-STRICT" }, "pass"},
	}
	for _, c := range cases {
		r := shard("L2", "", pass)
		c.edit(r)
		if got := reports.OverallVerdict(r); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestMerge_SumsCoverage: a shard's incomplete history survives the merge.
func TestMerge_SumsCoverage(t *testing.T) {
	a := shard("L5", "pass")
	a.Coverage = checker.Coverage{Histories: 2}
	b := shard("L5", "pass")
	b.Coverage = checker.Coverage{Histories: 3, Incomplete: 1}
	m, err := reports.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Coverage.Histories != 5 || m.Coverage.Incomplete != 1 || m.Verdict != "unknown" {
		t.Fatalf("merged coverage %+v, verdict %s", m.Coverage, m.Verdict)
	}
}

// TestHTML_ShowsCoveragePerCrashPoint: the report lists every crash point
// with how often it was reached, and names the ones never reached.
func TestHTML_ShowsCoveragePerCrashPoint(t *testing.T) {
	r := sampleReport()
	r.Coverage.CrashPoints = map[string]int{"kill-in-hang": 3}
	html, _ := page(t, r)
	for _, want := range []string{"crash point kill-in-hang", "crash point charge-then-drop", "never reached"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestVerdictWord_OneWordPerVerdict: a failed run reads FAILED in every
// file, never FAIL.
func TestVerdictWord_OneWordPerVerdict(t *testing.T) {
	dir := t.TempDir()
	p, err := reports.WriteAll(dir, sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	fail := regexp.MustCompile(`\bFAIL\b`)
	for _, path := range []string{p.Markdown, p.HTML, p.JUnit} {
		data, _ := os.ReadFile(path)
		if loc := fail.FindIndex(data); loc != nil {
			t.Errorf("%s says FAIL: …%s…", filepath.Base(path), data[max(0, loc[0]-60):min(len(data), loc[1]+60)])
		}
		if !bytes.Contains(data, []byte("FAILED")) {
			t.Errorf("%s never says FAILED", filepath.Base(path))
		}
	}
	for v, w := range map[string]string{"pass": "PASS", "fail": "FAILED", "unknown": "UNKNOWN", "odd": "UNKNOWN"} {
		if got := reports.VerdictWord(v); got != w {
			t.Errorf("VerdictWord(%q) = %q, want %q", v, got, w)
		}
	}
}
