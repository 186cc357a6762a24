package reports_test

import (
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
)

// TestCondenseNote_SumsCountsKeepsConstants: a merged note reads as one
// sentence per kind, integers summed and constants kept.
func TestCondenseNote_SumsCountsKeepsConstants(t *testing.T) {
	note := "judged 2 definitive answers; 1 key epochs answered more than once; judged 9 definitive answers; 0 key epochs answered more than once; TTL 1s"
	want := "judged 11 definitive answers; 1 key epochs answered more than once; TTL 1s"
	if got := reports.CondenseNote(note); got != want {
		t.Errorf("CondenseNote:\n got %q\nwant %q", got, want)
	}
	once := "judged 8 duplicates sent while their key was in flight; a 409 counts as waited after 1s (max_wait 2s × 0.5)"
	if got := reports.CondenseNote(once + "; " + strings.Replace(once, "8", "7", 1)); got != strings.Replace(once, "8", "15", 1) {
		t.Errorf("constants must be kept, counts summed: %q", got)
	}
}

// TestCondenseNote_FoldsPartsDifferingOnlyInIDs: parts that differ only
// in their ids become one, saying how many it stands for.
func TestCondenseNote_FoldsPartsDifferingOnlyInIDs(t *testing.T) {
	note := "judged 2 succeeded charges over 9 orders; charged again outside every promise: ch_Wq7 (ord_a1_oa); charged again outside every promise: ch_Zx9 (ord_b2_oa)"
	want := "judged 2 succeeded charges over 9 orders; charged again outside every promise: ch_Wq7 (ord_a1_oa) (and 1 more like it)"
	if got := reports.CondenseNote(note); got != want {
		t.Errorf("CondenseNote:\n got %q\nwant %q", got, want)
	}
}
