package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Violation is one piece of evidence against one invariant: the (tenant,
// key) and order it concerns, and the few events that prove it, by id, so a
// report can draw exactly those ops, charges and faults on the timeline.
type Violation struct {
	Invariant   string   `json:"invariant"` // the check's ID: "M1", "P2", ...
	Tenant      string   `json:"tenant,omitempty"`
	Key         string   `json:"key,omitempty"` // the key as the server reads it (quotes removed)
	Order       string   `json:"order,omitempty"`
	Explanation string   `json:"explanation"`
	Ops         []int    `json:"ops,omitempty"`     // history.Op IDs, ascending
	Charges     []string `json:"charges,omitempty"` // history.Charge IDs, in ledger time order
	Faults      []int    `json:"faults,omitempty"`  // history.Fault IDs
	// Source names the history the ids refer to ("family seed=N"); Merge
	// fills it in, since ids from different histories collide.
	Source string `json:"source,omitempty"`
}

// CheckResult is the outcome of one check over one history (or, after
// Merge, over several). The brief named this type Check; Go does not allow a
// type and the entry point func Check to share a name, and the call site
// checker.Check(h) is the one every caller writes, so the type gave way.
type CheckResult struct {
	ID      string  `json:"id"`    // "M1".."M6", "P1", "P2", "R1".."R4", "E1", "E2"
	Name    string  `json:"name"`  // "no double charge", ...
	Level   string  `json:"level"` // the lowest level that requires it: "L1".."L5", or "all"
	Verdict Verdict `json:"verdict"`
	// Exercised is false when the history never asked this check's question
	// (one tenant only, no mutated body, no fault): Verdict is then PASS,
	// the report should say "not exercised", and the level is not credited.
	// It is true whenever a violation was found.
	Exercised  bool        `json:"exercised"`
	Violations []Violation `json:"violations,omitempty"`
	// Note says what was judged ("judged 412 ops over 37 keys"), why the
	// verdict is UNKNOWN, or what was deliberately not held against the
	// target (a double charge outside every promise).
	Note string `json:"note,omitempty"`
}

// Coverage counts what a history exercised. The certification level reads
// it (L1 needs sequential retries, L2 concurrent duplicates, L4 faults),
// and reports print it next to the verdicts.
type Coverage struct {
	Histories  int `json:"histories"`
	Incomplete int `json:"incomplete"` // histories whose run was interrupted
	Ops        int `json:"ops"`
	Keys       int `json:"keys"` // distinct (tenant, key) pairs with a valid key
	Orders     int `json:"orders"`
	Tenants    int `json:"tenants"`
	// SequentialRetries counts equal-body requests sent after an earlier
	// request of their key had received a definitive answer.
	SequentialRetries int `json:"sequential_retries"`
	// ConcurrentDuplicates counts equal-body requests sent while another
	// request of their key was still in flight.
	ConcurrentDuplicates int `json:"concurrent_duplicates"`
	// CrossTenantKeys counts key strings that two or more tenants used.
	CrossTenantKeys int `json:"cross_tenant_keys"`
	// MutatedBodies counts requests whose body differs canonically from the
	// first body of their key; EquivalentBodies those that are canonically
	// equal but differ byte for byte (key order, whitespace, 100 vs 1e2).
	MutatedBodies    int `json:"mutated_bodies"`
	EquivalentBodies int `json:"equivalent_bodies"`
	// LookAlikePairs counts pairs of orders that one tenant paid under
	// two different keys for the same amount and currency (nothing but
	// the order told them apart); LookAlikeCharged those of them whose
	// two orders were each charged exactly once, by a charge of its own.
	LookAlikePairs   int `json:"look_alike_pairs"`
	LookAlikeCharged int `json:"look_alike_charged"`
	// Faults counts the disruptive faults the history injected itself (a
	// scripted decline is not one, nor a foreign fault it lived through).
	Faults int `json:"faults"`
	// ExpiryProbes counts definitive answers to retries sent late in the
	// TTL, in [TTL/2, TTL]; PastTTL to retries sent more than TTL after
	// their key's first request; LateRetries to those of them sent in
	// (TTL, RetryWindow], the window a target may promise beyond its TTL.
	ExpiryProbes int `json:"expiry_probes"`
	PastTTL      int `json:"past_ttl"`
	LateRetries  int `json:"late_retries"`
	// CrashFaults counts crash-class faults (history.Crash, such as kill,
	// restart or gateway charge_then_hang) that fired; armed faults that
	// never struck are not counted.
	CrashFaults int `json:"crash_faults"`
	// CrashJudged counts key epochs that a fired crash-class fault struck
	// and on which M6 reached a judgement (converged, or proven stuck).
	CrashJudged int `json:"crash_judged"`
	// CrashPoints counts, per crash point (CrashPoints), the histories in
	// which it was reached: every fault marked with it fired.
	CrashPoints map[string]int `json:"crash_points,omitempty"`
	// Stores are the target's stores (history.History.Stores), the union
	// over the histories: which store crash points L4 asks for.
	Stores []string `json:"stores,omitempty"`
	// EdgeRetries counts definitive answers to retries sent within the
	// undecided band around the end of their key's promise; they count as
	// none of the probes above.
	EdgeRetries int `json:"edge_retries,omitempty"`
	// NoGatewayIdempotency counts histories recorded against a gateway
	// without idempotency (History.Gateway.NoIdempotency): crash safety
	// is then not judged (NoProviderIdempotency).
	NoGatewayIdempotency int `json:"no_gateway_idempotency,omitempty"`
	// FaultKinds counts the faults the histories injected themselves, per
	// kind (history.Fault.Name), scripted declines included: which faults
	// the families drew, and how often.
	FaultKinds map[string]int `json:"fault_kinds,omitempty"`
	// MaxSkew is the largest replica clock skew measured while a fault
	// the histories injected was in force (history.Fault.Skew).
	MaxSkew time.Duration `json:"max_skew,omitempty"`
}

// Add sums two coverages field by field: the coverage of two histories, or
// of two shards of one certification, judged together.
func (c Coverage) Add(o Coverage) Coverage {
	return Coverage{
		Histories:            c.Histories + o.Histories,
		Incomplete:           c.Incomplete + o.Incomplete,
		Ops:                  c.Ops + o.Ops,
		Keys:                 c.Keys + o.Keys,
		Orders:               c.Orders + o.Orders,
		Tenants:              c.Tenants + o.Tenants,
		SequentialRetries:    c.SequentialRetries + o.SequentialRetries,
		ConcurrentDuplicates: c.ConcurrentDuplicates + o.ConcurrentDuplicates,
		CrossTenantKeys:      c.CrossTenantKeys + o.CrossTenantKeys,
		MutatedBodies:        c.MutatedBodies + o.MutatedBodies,
		EquivalentBodies:     c.EquivalentBodies + o.EquivalentBodies,
		LookAlikePairs:       c.LookAlikePairs + o.LookAlikePairs,
		LookAlikeCharged:     c.LookAlikeCharged + o.LookAlikeCharged,
		Faults:               c.Faults + o.Faults,
		ExpiryProbes:         c.ExpiryProbes + o.ExpiryProbes,
		PastTTL:              c.PastTTL + o.PastTTL,
		LateRetries:          c.LateRetries + o.LateRetries,
		EdgeRetries:          c.EdgeRetries + o.EdgeRetries,
		NoGatewayIdempotency: c.NoGatewayIdempotency + o.NoGatewayIdempotency,
		CrashFaults:          c.CrashFaults + o.CrashFaults,
		CrashJudged:          c.CrashJudged + o.CrashJudged,
		CrashPoints:          addCounts(c.CrashPoints, o.CrashPoints),
		Stores:               union(c.Stores, o.Stores),
		FaultKinds:           addCounts(c.FaultKinds, o.FaultKinds),
		MaxSkew:              max(c.MaxSkew, o.MaxSkew),
	}
}

// union is a and the names of b not in a, in their order.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Result is the checker's answer for a history: every check in a fixed
// order (M1..M6, P1, P2, R1..R4, E1, E2), the worst verdict, and the
// certification level reached.
type Result struct {
	Checks []CheckResult `json:"checks"`
	// Verdict is the worst verdict of any check; an interrupted history, or
	// one without a single op (the target never became ready), is at least
	// UNKNOWN, because the absence of violations proves too little.
	Verdict Verdict `json:"verdict"`
	// Level is the highest certification level reached, "L0" to "L5"; see
	// the ladder in level.go and doc.go.
	Level string `json:"level"`
	// LevelNote says why the level stopped where it did.
	LevelNote string   `json:"level_note,omitempty"`
	Coverage  Coverage `json:"coverage"`
	// Source names the judged history ("family seed=N"); empty after Merge.
	Source string `json:"source,omitempty"`
}

// Failed reports whether some check proved a violation. UNKNOWN is not a
// failure: callers that must not pass on it test Verdict themselves.
func (r Result) Failed() bool { return r.Verdict == Failed }

// Find returns the check with the given ID.
func (r Result) Find(id string) (CheckResult, bool) {
	for _, c := range r.Checks {
		if c.ID == id {
			return c, true
		}
	}
	return CheckResult{}, false
}

// Merge combines the results of several histories of one target (one per
// scenario family or shard) into one: per check the worst verdict, its
// first MaxMergedViolations violations, exercised if any history
// exercised it; coverage summed; the
// level recomputed on the merged checks. Certifying a target takes the
// merge, because no single family exercises every level.
func Merge(results ...Result) Result {
	var m Merger
	for _, r := range results {
		m.Add(r)
	}
	return m.Result()
}

// Merger is Merge one result at a time: a family folds each example's
// judgement in as it comes and lets the example go, so a run's memory
// does not grow with its length.
type Merger struct {
	checks []CheckResult
	cov    Coverage
	n      int
}

// MaxMergedViolations is how many violations of one check a merge keeps:
// a failing soak finds the same violation thousands of times, and its
// verdict, its count of failing examples and the evidence a report shows
// (a few per check, with their histories) need no more.
const MaxMergedViolations = 20

// Add folds r in.
func (m *Merger) Add(r Result) {
	m.cov = m.cov.Add(r.Coverage)
	m.checks = mergeChecks(m.checks, tagged(r))
	for i := range m.checks {
		if v := m.checks[i].Violations; len(v) > MaxMergedViolations {
			m.checks[i].Violations = slices.Clip(v[:MaxMergedViolations])
		}
	}
	m.n++
}

// Len is how many results were added.
func (m *Merger) Len() int { return m.n }

// Result is the merge of every result added so far; adding more later
// does not change it.
func (m *Merger) Result() Result {
	return finish(slices.Clone(m.checks), m.cov)
}

// tagged returns a copy of r's checks whose violations name r's source.
func tagged(r Result) []CheckResult {
	out := make([]CheckResult, len(r.Checks))
	for i, c := range r.Checks {
		c.Violations = append([]Violation(nil), c.Violations...)
		for j := range c.Violations {
			if c.Violations[j].Source == "" {
				c.Violations[j].Source = r.Source
			}
		}
		out[i] = c
	}
	return out
}

// mergeChecks folds next into acc, matching checks by ID and keeping the
// order in which IDs first appear.
func mergeChecks(acc, next []CheckResult) []CheckResult {
	for _, c := range next {
		i := indexOf(acc, c.ID)
		if i < 0 {
			acc = append(acc, c)
			continue
		}
		acc[i] = MergeCheck(acc[i], c)
	}
	return acc
}

// MergeCheck folds b, another result of check a.ID (another example's,
// family's or shard's), into a: the worse verdict, exercised if either
// was, every violation, and both notes, each distinct note once and at
// most a few (joinNotes). A PASS that was not exercised notes only that
// ("not exercised: no retry went past the TTL"): beside the other's
// judgement of the same check it would contradict it, so its note is
// dropped. Merge and reports.Merge (`idemcheck merge`) both fold a check
// through it.
func MergeCheck(a, b CheckResult) CheckResult {
	an, bn := a.Note, b.Note
	if b.Exercised && !a.Exercised && a.Verdict == Pass {
		an = ""
	}
	if a.Exercised && !b.Exercised && b.Verdict == Pass {
		bn = ""
	}
	a.Verdict = Worst(a.Verdict, b.Verdict)
	a.Exercised = a.Exercised || b.Exercised
	a.Violations = append(a.Violations, b.Violations...)
	a.Note = joinNotes(an, bn)
	return a
}

func indexOf(checks []CheckResult, id string) int {
	for i, c := range checks {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// joinNotes joins two notes, keeping each distinct note once and at most
// maxNotes of them: a family merges hundreds of examples, and a note is
// for a reader.
func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	parts := strings.Split(a, "; ")
	more := 0
	if last := parts[len(parts)-1]; strings.HasPrefix(last, "(+") {
		fmt.Sscanf(last, "(+%d more)", &more)
		parts = parts[:len(parts)-1]
	}
	switch {
	case slices.Contains(parts, b):
	case len(parts) < maxNotes:
		parts = append(parts, b)
	default:
		more++
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("(+%d more)", more))
	}
	return strings.Join(parts, "; ")
}

const maxNotes = 3

// finish computes the overall verdict and level of a set of checks.
func finish(checks []CheckResult, cov Coverage) Result {
	v := Pass
	for _, c := range checks {
		v = Worst(v, c.Verdict)
	}
	if cov.Incomplete > 0 || cov.Ops == 0 {
		v = Worst(v, Unknown)
	}
	level, why := certify(checks, cov)
	return Result{Checks: checks, Verdict: v, Level: level, LevelNote: why, Coverage: cov}
}

// String renders a one-line summary per check, for logs and examples.
func (r Result) String() string {
	var b strings.Builder
	for _, c := range r.Checks {
		b.WriteString(c.ID + " " + string(c.Verdict))
		if !c.Exercised {
			b.WriteString(" (not exercised)")
		}
		b.WriteString("\n")
	}
	b.WriteString("verdict " + string(r.Verdict) + ", level " + r.Level + "\n")
	return b.String()
}
