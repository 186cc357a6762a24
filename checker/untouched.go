package checker

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/history"
)

// t1 judges T1 harness untouched: every touch (history.Touch) is
// FAILED, naming what was touched, when it was found and by which link or
// replica. Exercised when idemcheck proved the harness at least once
// (History.Proofs).
func (ix *index) t1() CheckResult {
	c := newCheck("T1")
	for _, t := range ix.h.Touches {
		c.flag(Failed, Violation{Explanation: fmt.Sprintf("%s, by %s, found %s at %s", t.What, t.By, t.Found, t.At.Round(time.Millisecond))})
	}
	c.Exercised = c.Exercised || ix.h.Proofs > 0
	if ix.h.Proofs > 0 {
		c.Note = fmt.Sprintf("proved the toxics, the links and the gateway's rules %d times (after the injects and heals) and followed every request to the provider's address", ix.h.Proofs)
	}
	if len(ix.h.Touches) > 0 {
		c.Note = notes(c.Note, Untrusted)
	}
	return c
}

// Untrusted is what a FAILED T1 says of every other verdict of its run.
const Untrusted = "the server reached the harness (the oracle's ledger, its faults): no other verdict of this run can be trusted"

// Untouched judges T1 alone over h: the run's guard holds its evidence
// in a history of no ops (Touches, Proofs), judged by the same rule as
// any history.
func Untouched(h *history.History) CheckResult { return build(h).t1() }

// touched is the level note of a run whose T1 FAILED ("" otherwise): it
// certifies L0, whatever else held.
func touched(checks []CheckResult) string {
	i := indexOf(checks, "T1")
	if i < 0 || checks[i].Verdict != Failed {
		return ""
	}
	return "T1 harness untouched FAILED: " + Untrusted
}
