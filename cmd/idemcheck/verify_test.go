package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
)

// `idemcheck verify` exits 0 on a report as written, 1 naming the field
// after one byte of a verdict is changed, and 2 for a file that is not a
// report.
func TestCLI_VerifyExitCodes(t *testing.T) {
	dir := t.TempDir()
	r := &reports.Report{SchemaVersion: reports.SchemaVersion, Target: "t", Verdict: "pass", Level: "L5", Complete: true, Seed: 3,
		Families: []reports.FamilyResult{{Name: "late-retry", Verdict: "PASS", Scenarios: 4, Seeds: 4}},
		Checks:   []reports.Check{{ID: "E2", Name: "retry window covered", Family: "late-retry", Level: "L5", Verdict: "NON-STRICT", Exercised: true}},
		Seal:     &reports.Seal{TargetSHA256: strings.Repeat("ab", 32)}}
	if _, err := reports.WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, reports.JSONFile)
	if code, out, stderr := runCLI(t, "verify", dir); code != exitPass || !strings.Contains(out, "as written by the run (sha256:") {
		t.Fatalf("fresh report: exit %d, %q %q", code, out, stderr)
	}
	data, _ := os.ReadFile(path)
	for _, c := range []struct{ from, to, field string }{
		{`"verdict": "pass"`, `"verdict": "pasS"`, "edited: verdict"},
		{`"verdict": "NON-STRICT"`, `"verdict": "NON-STRICS"`, "edited: checks[0] (id E2, name retry window covered, family late-retry)"},
	} {
		os.WriteFile(path, []byte(strings.Replace(string(data), c.from, c.to, 1)), 0o644)
		if code, out, _ := runCLI(t, "verify", path); code != exitFail || !strings.Contains(out, c.field) {
			t.Errorf("%s -> %s: exit %d, %q; want exit 1 and %q", c.from, c.to, code, out, c.field)
		}
	}
	os.WriteFile(path, []byte("not json"), 0o644)
	if code, _, _ := runCLI(t, "verify", path); code != exitUsage {
		t.Errorf("not a report: exit %d, want 2", code)
	}
}
