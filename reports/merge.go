package reports

import (
	"fmt"
	"slices"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
)

// Merge combines the reports of one target's shards (`certify --shard
// k/n` on n runners) into one: families and checks matched by name, the
// worst verdict of each, scenarios, seeds, ops and coverage summed, every
// violation kept; a family's duration and the run's peak memory are the
// largest shard's (the shards run side by side), its pace the summed ops
// over that duration; a check's results merge as the checker merges a
// family's examples (checker.MergeCheck), notes included.
// The level is the lowest any shard reached: a level is only as proven as
// its weakest shard, and the shards' raw results are not in the reports.
// Reports of different targets are refused, and so are reports of two
// known idemcheck builds: what a check means may differ between them.
func Merge(reps ...*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("merge: no reports")
	}
	out := *reps[0]
	out.Families, out.Checks, out.Violations = nil, nil, nil
	out.Counterexamples = map[string]*history.History{}
	out.Shard, out.Complete, out.Level = "", true, "L5"
	out.Coverage = checker.Coverage{}
	var dur time.Duration
	for _, r := range reps {
		if r.Target != out.Target {
			return nil, fmt.Errorf("merge: reports of different targets (%s and %s)", out.Target, r.Target)
		}
		tool, err := mergeTool(out.Tool, r.Tool)
		if err != nil {
			return nil, err
		}
		out.Tool = tool
		out.Complete = out.Complete && r.Complete
		out.Level = min(out.Level, r.Level)
		out.Coverage = out.Coverage.Add(r.Coverage)
		dur = max(dur, time.Duration(r.Duration))
		out.PeakRSS = max(out.PeakRSS, r.PeakRSS)
		out.Families = mergeFamilies(out.Families, r.Families)
		out.Checks = mergeChecks(out.Checks, r.Checks)
		out.Violations = append(out.Violations, r.Violations...)
		for fam, h := range r.Counterexamples {
			if out.Counterexamples[fam] == nil {
				out.Counterexamples[fam] = h
			}
		}
	}
	out.Duration = Duration(dur)
	out.Verdict = OverallVerdict(&out)
	return &out, nil
}

// mergeTool is the merged report's build: the one known commit of the
// shards. Two different known commits are refused; a shard whose build is
// unknown (or that predates the tool field) is not refused for it.
func mergeTool(acc, next Tool) (Tool, error) {
	known := func(t Tool) bool { return t.Commit != "" && t.Commit != Unknown }
	switch {
	case !known(next):
		return acc, nil
	case !known(acc):
		return next, nil
	case acc.Commit != next.Commit:
		return acc, fmt.Errorf("merge: reports of different idemcheck builds (%s and %s): certify every shard with one build", acc, next)
	}
	return acc, nil
}

func mergeFamilies(acc, next []FamilyResult) []FamilyResult {
	for _, f := range next {
		i := indexFamily(acc, f.Name)
		if i < 0 {
			acc = append(acc, f)
			continue
		}
		a := &acc[i]
		a.Verdict = worse(a.Verdict, f.Verdict)
		a.Scenarios += f.Scenarios
		a.Seeds += f.Seeds
		a.Ops += f.Ops
		a.Duration = max(a.Duration, f.Duration)
		a.SetPace()
		a.NotJudged = a.NotJudged && f.NotJudged
		if a.Incident == "" && f.Incident != "" {
			a.FailSeed, a.Incident, a.History, a.Steps = f.FailSeed, f.Incident, f.History, f.Steps
			a.ShrunkRequests, a.ShrunkFaults, a.FirstFailure = f.ShrunkRequests, f.ShrunkFaults, f.FirstFailure
		}
	}
	return acc
}

func indexFamily(fs []FamilyResult, name string) int {
	for i, f := range fs {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// mergeChecks folds next into acc, matching checks by ID and family; a
// check's results merge as the checker merges them (checker.MergeCheck).
func mergeChecks(acc, next []Check) []Check {
	for _, c := range next {
		i := slices.IndexFunc(acc, func(a Check) bool { return a.ID == c.ID && a.Family == c.Family })
		if i < 0 {
			acc = append(acc, c)
			continue
		}
		m := checker.MergeCheck(acc[i].result(), c.result())
		acc[i].Verdict, acc[i].Exercised, acc[i].Note = string(m.Verdict), m.Exercised, m.Note
	}
	return acc
}

// result is the check as the checker holds it, violations aside.
func (c Check) result() checker.CheckResult {
	return checker.CheckResult{ID: c.ID, Name: c.Name, Level: c.Level, Verdict: checker.Verdict(c.Verdict), Exercised: c.Exercised, Note: c.Note}
}

func worse(a, b string) string { return string(checker.Worst(checker.Verdict(a), checker.Verdict(b))) }

// OverallVerdict is a report's verdict, the one rule for a single run and
// a merge of shards: "fail" when any check or family FAILED
// (or is NON-STRICT under --strict), even in an incomplete run, because a
// proven violation stays proven; otherwise "unknown" when anything could not
// be decided: an UNKNOWN check or family (a family that did not fit its
// budget, a search that stopped), a verdict this build cannot read, an
// interrupted run, or an incomplete history among those judged; otherwise
// "pass". UNKNOWN is never success: the CLI maps it to exit 3.
func OverallVerdict(r *Report) string {
	verdict := "pass"
	judge := func(v string) {
		switch {
		case v == string(checker.Failed), r.Strict && v == string(checker.NonStrict):
			verdict = "fail"
		case !checker.Verdict(v).Acceptable() && verdict != "fail":
			verdict = "unknown"
		}
	}
	for _, c := range r.Checks {
		judge(c.Verdict)
	}
	for _, f := range r.Families {
		judge(f.Verdict)
	}
	if verdict == "pass" && (!r.Complete || r.Coverage.Incomplete > 0) {
		return "unknown"
	}
	return verdict
}
