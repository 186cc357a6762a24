package certify_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/families"
)

// An interrupted run (Ctrl-C) still returns a report, marked incomplete,
// and the examples the interruption cut short are not held against the
// server: the verdict is unknown, never a false FAILED.
func TestRun_InterruptLeavesIncompleteReportWithoutFalseFailures(t *testing.T) {
	dir := binDir(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	rep, err := certify.Run(ctx, member(t, "reference", dir), certify.Options{
		Families: families.MustSelect("concurrent-duplicates", "crash-window"), Budget: 16 * time.Second,
		Progress: func(p certify.Progress) {
			if p.Family == "crash-window" && p.Examples >= 1 {
				cancel(context.Canceled) // mid-family, with requests in flight in the next example
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Complete || rep.Verdict != "unknown" || rep.Interrupted == "" {
		t.Fatalf("report: complete=%v verdict=%s interrupted=%q; want incomplete, unknown, with a reason", rep.Complete, rep.Verdict, rep.Interrupted)
	}
	for _, c := range rep.Checks {
		if c.Verdict == "FAILED" {
			t.Errorf("interrupted run reports %s FAILED in %s: %s", c.ID, c.Family, c.Note)
		}
	}
	if len(rep.Families) != 2 || rep.Families[0].Scenarios == 0 {
		t.Fatalf("families gathered before the interrupt are lost: %+v", rep.Families)
	}
}
