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

// TestMerge_ExercisedCheckDropsNotExercisedNote: two shards of one
// family, one whose examples sent no retry past the TTL (E2 PASS, not
// exercised, noted so) and one that judged E2: the merged E2 is
// exercised, and its note is the judgement, with no "not exercised"
// beside it, in either order, as checker.Merge keeps a family's notes.
func TestMerge_ExercisedCheckDropsNotExercisedNote(t *testing.T) {
	missed := shard("L4", "pass", reports.Check{ID: "E2", Family: "late-retry", Verdict: "PASS",
		Note: "not exercised: no retry went past the TTL (2s)"})
	judged := shard("L5", "pass", reports.Check{ID: "E2", Family: "late-retry", Verdict: "PASS", Exercised: true,
		Note: "judged 3 definitive answers to retries sent in (TTL 2s, retry window 10s]"})
	for _, order := range [][]*reports.Report{{missed, judged}, {judged, missed}} {
		m, err := reports.Merge(order...)
		if err != nil {
			t.Fatal(err)
		}
		if c := m.Checks[0]; len(m.Checks) != 1 || !c.Exercised || c.Note != judged.Checks[0].Note {
			t.Errorf("merged E2 (first shard's note %q): %+v", order[0].Checks[0].Note, m.Checks)
		}
	}
}
