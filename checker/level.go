package checker

import (
	"fmt"
	"strings"
)

// rung is one certification level: the checks it adds, which must all be
// exercised and end PASS, NON-STRICT or INFORMATIONAL, and the kind of
// traffic the history must contain for the level to mean anything.
type rung struct {
	level  string
	name   string
	checks []string
	needs  func(Coverage) string // "" when satisfied, else what is missing
	// unjudged says why the rung's question could not be asked of any
	// server in this run ("" when it could): the rung is not reached,
	// and the note says "not judged" rather than what failed.
	unjudged func(Coverage) string
}

// ladder is docs/protocol.md §7 (Levels and verdicts) as data. M5 (tenant
// isolation) is required at every level, so it sits on the first rung
// that everything else stands on.
// M1 appears twice: L1 judges it over sequential retries, L2 over
// concurrent duplicates; the check is the same, the traffic is not.
var ladder = []rung{
	{"L1", "retry-safe", []string{"M1", "M2", "M4", "M5", "A1"}, needSequential, nil},
	{"L2", "concurrency-safe", []string{"M1"}, needConcurrent, nil},
	{"L3", "payload-safe", []string{"P1", "P2"}, nil, nil},
	{"L4", "crash-safe", []string{"M3", "M6"}, needCrashes, providerUnjudged},
	{"L5", "expiry-safe", []string{"E1", "E2"}, nil, nil},
}

// LevelName is the name of a certification level ("L2" →
// "concurrency-safe", "L0" → "not certified"), or "" for a level this
// build does not know: the ladder's, which every report shows beside the
// level.
func LevelName(level string) string {
	if level == "L0" {
		return "not certified"
	}
	for _, r := range ladder {
		if r.level == level {
			return r.name
		}
	}
	return ""
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

// needCrashes is what L4 needs besides M3 and M6: a crash-class fault
// seen to fire, an M6 judgement on a key such a fault struck, and every
// crash point of the target's stores reached. A crash point no payment
// was struck at (the policy left a wave no room for it, or no wave of the
// run reached it) leaves L4 not reached, naming it, and the level stands
// where the evidence holds: not failed, the evidence is incomplete, not
// against the target; not L4 either, which no partial wave earns.
func needCrashes(c Coverage) string {
	switch missing := missingCrashPoints(c); {
	case c.CrashFaults == 0:
		return "no crash-class fault (one that can leave money and the key's record out of step, such as kill, restart or gateway charge_then_hang) seen to fire"
	case c.CrashJudged == 0:
		return "M6 judged no key that a crash struck"
	case len(missing) > 0:
		return fmt.Sprintf("crash points %s not covered (%d of %d crash points never reached)", strings.Join(missing, ", "), len(missing), len(crashPointsFor(c.Stores)))
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
	if why := touched(checks); why != "" {
		return "L0", why
	}
	reached := "L0"
	for _, r := range ladder {
		if r.unjudged != nil {
			if why := r.unjudged(cov); why != "" {
				return reached, fmt.Sprintf("%s %s not judged: %s", r.level, r.name, why)
			}
		}
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
