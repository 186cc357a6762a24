package checker

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/crashwave"
	"github.com/idemcheck/idemcheck/history"
)

// CrashPoints are the names of the points of a request at which the
// crash-window family strikes, in crashwave.Table's order: that table is
// the one list of them, shared with the generators and the target's
// validation. A history marks the point a fault belongs to with
// Params[history.ParamCrashPoint]; L4 crash-safe needs every point of the
// target's stores (crashwave.For(History.Stores)) reached (every
// fault carrying it fired) somewhere in the certification, and is not
// reached, naming the points not covered, until then.
var CrashPoints = crashwave.Names()

// crashPointsFor names the points a target with these stores must reach.
func crashPointsFor(stores []string) []string {
	var out []string
	for _, p := range crashwave.For(stores) {
		out = append(out, p.Name)
	}
	return out
}

// crashes returns the crash-class faults of fs that fired: those that
// can leave money and the key's record out of step (history.Crash: a
// process killed or restarted mid-request, a gateway that charged and did
// not say so). Only these certify L4.
func crashes(fs []history.Fault) []history.Fault {
	var out []history.Fault
	for _, f := range fs {
		if f.ClassOf() == history.Crash && f.HasFired() {
			out = append(out, f)
		}
	}
	return out
}

// crashPointsReached counts, per crash point, the payments it struck: a
// payment (its faults share Params[history.ParamCrashPayment]; without
// one, the whole history is one payment) counts when every fault naming
// the point for it fired.
func crashPointsReached(fs []history.Fault) map[string]int {
	type strike struct{ point, payment string }
	fired := map[strike]bool{}
	for _, f := range fs {
		p := f.Params[history.ParamCrashPoint]
		if p == "" {
			continue
		}
		k := strike{p, f.Params[history.ParamCrashPayment]}
		if ok, seen := fired[k]; !seen || ok {
			fired[k] = f.HasFired()
		}
	}
	out := map[string]int{}
	for k, ok := range fired {
		if ok {
			out[k.point]++
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// struckBy reports whether a fired crash-class fault struck epoch e: a
// gateway fault for the epoch's order fired while the epoch was open, or
// a process fault fired while one of the epoch's requests was in flight on
// that replica (on any replica when the target names none).
func (ix *index) struckBy(e *epoch) []int {
	var ids []int
	last := final(e.ops).Complete
	for _, f := range ix.crashes {
		if f.Fired < e.start || f.Fired > last {
			continue
		}
		if f.Order != "" {
			if slices.ContainsFunc(e.ops, func(o *opInfo) bool { return o.Order == f.Order }) {
				ids = append(ids, f.ID)
			}
			continue
		}
		replica, named := replicaOf(f.Target)
		if slices.ContainsFunc(e.ops, func(o *opInfo) bool {
			return o.Invoke <= f.Fired && f.Fired <= o.Complete && (!named || o.Replica == replica)
		}) {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// replicaOf parses "replicaN".
func replicaOf(target string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(target, "replica"))
	return n, err == nil && strings.HasPrefix(target, "replica")
}

// missingCrashPoints returns the CrashPoints that cov never reached.
func missingCrashPoints(cov Coverage) []string {
	var out []string
	for _, p := range crashPointsFor(cov.Stores) {
		if cov.CrashPoints[p] == 0 {
			out = append(out, p)
		}
	}
	return out
}

// addCounts sums two per-name counts; nil when both are empty.
func addCounts(a, b map[string]int) map[string]int {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]int{}
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}
