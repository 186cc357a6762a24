package reports_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/reports"
)

// bigPassingReport is a passing reference certification as certify builds
// it: six families, every check's note merged by checker.Merge over about
// a thousand examples, as a real run's are.
func bigPassingReport() *reports.Report {
	r := &reports.Report{SchemaVersion: reports.SchemaVersion, Target: "reference", Verdict: "pass", Level: "L5",
		Seed: 1, Budget: reports.Duration(50 * time.Second), Duration: reports.Duration(48 * time.Second), Complete: true, Replicas: 2,
		Started: time.Date(2026, 12, 2, 18, 55, 0, 0, time.UTC)}
	for fi, fam := range []string{"concurrent-duplicates", "key-reuse", "crash-window", "late-retry", "tenants", "protocol"} {
		var results []checker.Result
		for ex := range 300 {
			res := checker.Result{Source: fmt.Sprintf("%s seed=%d", fam, ex)}
			for _, c := range catalog {
				note := fmt.Sprintf("judged %d successful answers against %d ledger charges; %d key epochs answered more than once", ex%13+1, ex%5+1, ex%3)
				if c[0] == "R3" {
					note = fmt.Sprintf("judged %d duplicates sent while their key was in flight; a 409 counts as waited after 1s (max_wait 2s × 0.5)", ex%7)
				}
				res.Checks = append(res.Checks, checker.CheckResult{ID: c[0], Name: c[1], Level: c[2], Verdict: checker.Pass, Exercised: c[0][0] != 'E', Note: note})
			}
			results = append(results, res)
		}
		m := checker.Merge(results...)
		r.Families = append(r.Families, reports.FamilyResult{Name: fam, Level: fmt.Sprintf("L%d", fi%5+1), Verdict: "PASS", Scenarios: 300, Seeds: 40})
		for _, c := range m.Checks {
			r.Checks = append(r.Checks, reports.Check{ID: c.ID, Name: c.Name, Family: fam, Level: c.Level, Verdict: string(c.Verdict), Exercised: c.Exercised, Note: c.Note})
		}
	}
	return r
}

// TestWriteAll_PassingReportIsSmall: a passing certification's junit.xml
// is well under 100 KB and its index.html under 300 KB: a merged check
// carries one condensed note, not every example's note concatenated.
func TestWriteAll_PassingReportIsSmall(t *testing.T) {
	dir := t.TempDir()
	p, err := reports.WriteAll(dir, bigPassingReport())
	if err != nil {
		t.Fatal(err)
	}
	limits := map[string]int64{p.JUnit: 100 << 10, p.HTML: 300 << 10, p.JSON: 300 << 10, p.Markdown: 16 << 10}
	for path, limit := range limits {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", filepath.Base(path), st.Size())
		if st.Size() > limit {
			t.Errorf("%s is %d bytes, more than %d", filepath.Base(path), st.Size(), limit)
		}
	}
}

func TestWriteAll_WritesEveryFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	r := sampleReport()
	p, err := reports.WriteAll(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p.JSON, p.JUnit, p.Markdown, p.HTML, p.Histories["crash-window"], p.Histories["key-reuse"]} {
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("%q: %v (size %v)", path, err, fi)
		}
	}
	if got := filepath.Base(p.Histories["crash-window"]); got != "history-crash-window.json" {
		t.Errorf("history file = %s", got)
	}
	if h, err := history.ReadFile(p.Histories["crash-window"]); err != nil || len(h.Ops) != 6 {
		t.Errorf("history does not read back: %v", err)
	}
	if r.Families[3].History != "" {
		t.Error("WriteAll modified the caller's report")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 6 {
		t.Errorf("dir holds %d entries, want 6 (no temporary files left)", len(entries))
	}
}

func TestWriteAll_NilReport(t *testing.T) {
	if _, err := reports.WriteAll(t.TempDir(), nil); err == nil {
		t.Fatal("WriteAll(nil) succeeded")
	}
}
