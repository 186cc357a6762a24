package reports_test

import (
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
)

func shard(level, verdict string, checks ...reports.Check) *reports.Report {
	return &reports.Report{SchemaVersion: reports.SchemaVersion, Target: "t", Level: level, Verdict: verdict, Complete: true,
		Families: []reports.FamilyResult{{Name: "f", Verdict: "PASS", Scenarios: 10, Seeds: 2}}, Checks: checks}
}

func TestMerge_WorstVerdictSummedCountsLowestLevel(t *testing.T) {
	a := shard("L5", "pass", reports.Check{ID: "M1", Family: "f", Verdict: "PASS", Exercised: true})
	b := shard("L2", "fail", reports.Check{ID: "M1", Family: "f", Verdict: "FAILED", Exercised: true})
	b.Families[0].Verdict, b.Families[0].Incident = "FAILED", "incident-f.yaml"
	m, err := reports.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Verdict != "fail" || m.Level != "L2" || len(m.Checks) != 1 || m.Checks[0].Verdict != "FAILED" {
		t.Fatalf("merged: verdict %s level %s checks %+v", m.Verdict, m.Level, m.Checks)
	}
	if f := m.Families[0]; f.Scenarios != 20 || f.Seeds != 4 || f.Verdict != "FAILED" || f.Incident != "incident-f.yaml" {
		t.Fatalf("merged family: %+v", f)
	}
}

func TestMerge_IncompleteShardIsUnknownAndTargetsMustMatch(t *testing.T) {
	a := shard("L5", "pass", reports.Check{ID: "M1", Family: "f", Verdict: "PASS"})
	b := shard("L5", "unknown")
	b.Complete = false
	m, err := reports.Merge(a, b)
	if err != nil || m.Verdict != "unknown" || m.Complete {
		t.Fatalf("merged: %v %+v", err, m)
	}
	other := shard("L5", "pass")
	other.Target = "u"
	if _, err := reports.Merge(a, other); err == nil {
		t.Fatal("merged reports of two targets")
	}
}

// TestMerge_OneBuild: shards of one commit merge and keep its build; a
// shard of unknown build does not hide it; two commits are refused.
func TestMerge_OneBuild(t *testing.T) {
	built := func(commit string) *reports.Report {
		r := shard("L5", "pass")
		r.Tool = reports.Tool{Version: "v0.1.0", Commit: commit, CommitTime: "2026-12-03T10:11:12Z"}
		return r
	}
	unknown := built("unknown")
	unknown.Tool.Version = "unknown"
	m, err := reports.Merge(unknown, built("aaaa"), built("aaaa"), shard("L5", "pass"))
	if err != nil || m.Tool.Commit != "aaaa" {
		t.Fatalf("merged: %v, tool %+v", err, m.Tool)
	}
	if _, err := reports.Merge(built("aaaa"), built("bbbb")); err == nil || !strings.Contains(err.Error(), "different idemcheck builds") {
		t.Fatalf("merged shards of two builds: %v", err)
	}
}
