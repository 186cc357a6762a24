package checker

import "fmt"

// rung is one certification level: the checks it adds, which must all be
// exercised and end PASS, NON-STRICT or INFORMATIONAL, and the kind of
// traffic the history must contain for the level to mean anything.
type rung struct {
	level  string
	name   string
	checks []string
	needs  func(Coverage) string // "" when satisfied, else what is missing
}

// ladder is DESIGN.md §5 as data. M5 (tenant isolation) is required at
// every level, so it sits on the first rung that everything else stands on.
// M1 appears twice: L1 judges it over sequential retries, L2 over
// concurrent duplicates; the check is the same, the traffic is not.
var ladder = []rung{
	{"L1", "retry-safe", []string{"M1", "M2", "M4", "M5"}, needSequential},
	{"L2", "concurrency-safe", []string{"M1"}, needConcurrent},
	{"L3", "payload-safe", []string{"P1", "P2"}, nil},
	{"L4", "crash-safe", []string{"M3", "M6"}, needFaults},
	{"L5", "expiry-safe", []string{"E1", "E2"}, nil},
}

func needSequential(c Coverage) string {
	if c.SequentialRetries == 0 {
		return "no sequential retry"
	}
	return ""
}

func needConcurrent(c Coverage) string {
	if c.ConcurrentDuplicates == 0 {
		return "no concurrent duplicate"
	}
	return ""
}

func needFaults(c Coverage) string {
	if c.Faults == 0 {
		return "no fault injected"
	}
	return ""
}

// certify climbs the ladder: a level is reached when every check on its
// rung and on every rung below is exercised and acceptable, and the history
// holds the traffic each of those rungs needs. Protocol checks (R1..R4)
// never block a level: they grade, they do not certify. An interrupted or
// empty history certifies nothing.
func certify(checks []CheckResult, cov Coverage) (string, string) {
	switch {
	case cov.Incomplete > 0:
		return "L0", "history incomplete: an interrupted run certifies nothing"
	case cov.Ops == 0:
		return "L0", "no operation recorded"
	}
	reached := "L0"
	for _, r := range ladder {
		if why := blocks(r, checks, cov); why != "" {
			return reached, fmt.Sprintf("%s %s not reached: %s", r.level, r.name, why)
		}
		reached = r.level
	}
	return reached, ""
}

// blocks returns why rung r is not reached, or "".
func blocks(r rung, checks []CheckResult, cov Coverage) string {
	for _, id := range r.checks {
		i := indexOf(checks, id)
		switch {
		case i < 0:
			return id + " not judged"
		case !checks[i].Verdict.Acceptable():
			return fmt.Sprintf("%s %s", id, checks[i].Verdict)
		case !checks[i].Exercised:
			return id + " not exercised"
		}
	}
	if r.needs != nil {
		return r.needs(cov)
	}
	return ""
}
