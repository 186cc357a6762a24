package certify_test

import (
	"context"
	"strings"
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

// With FailFast, the first failing example stops every other family: the
// failing family is FAILED, each other one ends with the note that says
// so, and none is a PASS it did not earn.
func TestRun_FailFastStopsTheOtherFamilies(t *testing.T) {
	dir := binDir(t)
	rep, err := certify.Run(t.Context(), member(t, "naive", dir), certify.Options{
		Families: families.MustSelect("concurrent-duplicates", "crash-window", "late-retry"), Budget: 40 * time.Second, FailFast: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != "fail" {
		t.Fatalf("verdict %s, want fail", rep.Verdict)
	}
	for _, f := range rep.Families {
		switch {
		case f.Name == "concurrent-duplicates":
			if f.Verdict != "FAILED" {
				t.Errorf("%s: %s, want FAILED (naive's declared failure)", f.Name, f.Verdict)
			}
		case !strings.Contains(f.Note, "--fail-fast"):
			t.Errorf("%s: %s, note %q: want it stopped by the first failure", f.Name, f.Verdict, f.Note)
		case f.Verdict == "PASS":
			t.Errorf("%s: stopped early, yet PASS", f.Name)
		}
	}
}
