package checker

// Verdict is how one check, or a whole history, ended. The five values are
// the ones docs/protocol.md §7 names; a check that the history never
// exercised is still PASS but carries CheckResult.Exercised == false, so
// that a report can say "not exercised" and the certification level never
// credits it.
type Verdict string

const (
	// Pass means the check was judged and nothing was wrong.
	Pass Verdict = "PASS"
	// Informational marks a deviation that costs nothing but polish (the
	// replay marker header): it is reported, never graded.
	Informational Verdict = "INFORMATIONAL"
	// NonStrict marks a safe deviation from the protocol (a 400 where 422 is
	// due), graded as Autobahn does: it passes unless the run is --strict.
	NonStrict Verdict = "NON-STRICT"
	// Unknown means the history raised the question but did not answer it
	// (a crashed key never retried after recovery). It is never success.
	Unknown Verdict = "UNKNOWN"
	// Failed means the history proves a violation of money, payload or
	// expiry safety.
	Failed Verdict = "FAILED"
)

// Rank orders verdicts by severity: PASS 0 < INFORMATIONAL 1 < NON-STRICT 2
// < UNKNOWN 3 < FAILED 4. UNKNOWN sits above every passing grade because
// "could not decide" must never read as success, and below FAILED because
// a proven violation says more than an open question. A string that is not
// one of the five ranks as UNKNOWN: a verdict nobody can read decides nothing.
func (v Verdict) Rank() int {
	switch v {
	case Pass:
		return 0
	case Informational:
		return 1
	case NonStrict:
		return 2
	case Failed:
		return 4
	default:
		return 3
	}
}

// Acceptable reports whether v lets a certification level stand: PASS,
// INFORMATIONAL and NON-STRICT do, UNKNOWN and FAILED do not.
func (v Verdict) Acceptable() bool { return v.Rank() <= NonStrict.Rank() }

// Worst is the more severe of two verdicts, by Rank.
func Worst(a, b Verdict) Verdict {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}
