package certify_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/reports"
)

// A run hands out its report so far while it goes on, marked incomplete
// and never a pass, with the examples judged until then: a runner killed
// mid-run leaves that much evidence.
func TestRun_CheckpointsTheReportSoFar(t *testing.T) {
	dir := binDir(t)
	fam, err := families.FamilyByName("concurrent-duplicates")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var snaps []*reports.Report
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := certify.Run(ctx, member(t, "reference", dir), certify.Options{
		Families: []families.Family{fam}, Budget: 12 * time.Second, CheckpointEvery: 2 * time.Second,
		Checkpoint: func(r *reports.Report) { mu.Lock(); snaps = append(snaps, r); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(snaps) < 2 {
		t.Fatalf("%d checkpoints in a 12s run every 2s", len(snaps))
	}
	last := snaps[len(snaps)-1]
	if last.Complete || last.Verdict != "unknown" || len(last.Families) != 1 || last.Families[0].Scenarios == 0 {
		t.Fatalf("last checkpoint: complete %v, verdict %s, families %+v; want an incomplete, undecided report with the examples so far", last.Complete, last.Verdict, last.Families)
	}
	if last.Families[0].Scenarios > rep.Families[0].Scenarios || len(last.Checks) == 0 {
		t.Fatalf("checkpoint counts %d examples and %d checks, the final report %d", last.Families[0].Scenarios, len(last.Checks), rep.Families[0].Scenarios)
	}
	if !rep.Complete {
		t.Fatalf("the final report is incomplete: %s", rep.Interrupted)
	}
}
