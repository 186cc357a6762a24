package main

import (
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/reports"
)

// TestPrintSummary_RunWideFindingHasNoReplay: a finding of the whole run
// (A1's accounting, T1) names no example to replay, and the summary
// prints no empty "replay:" line for it; an example's finding keeps its
// replay command.
func TestPrintSummary_RunWideFindingHasNoReplay(t *testing.T) {
	rep := &reports.Report{Target: "t", Verdict: "fail", Level: "L0", Complete: true,
		Violations: []reports.Violation{
			{Violation: checker.Violation{Invariant: "A1", Explanation: "charge ch_1 names no order"}, Family: "run"},
			{Violation: checker.Violation{Invariant: "M1", Explanation: "order o charged twice"}, Family: "protocol", Replay: "idemcheck replay x.yaml --target t"},
		}}
	var b strings.Builder
	printSummary(&b, rep, reports.Paths{}, false)
	out := b.String()
	if strings.Contains(out, "replay: \n") {
		t.Errorf("an empty replay line:\n%s", out)
	}
	if !strings.Contains(out, "A1: charge ch_1 names no order\n") || !strings.Contains(out, "    replay: idemcheck replay x.yaml --target t\n") {
		t.Errorf("want A1's finding and M1's replay command:\n%s", out)
	}
}
