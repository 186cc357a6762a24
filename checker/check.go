package checker

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/history"
)

// Check judges one history. It is pure: the same history always yields the
// same Result, with checks in a fixed order and violations in a
// deterministic order; it reads no clock, does no I/O and draws no random
// numbers. A nil history is judged as an empty one: UNKNOWN, since a run
// that recorded nothing proves nothing.
func Check(h *history.History) Result {
	if h == nil {
		h = &history.History{}
	}
	ix := build(h)
	checks := make([]CheckResult, 0, len(catalog))
	for _, s := range catalog {
		checks = append(checks, s.judge(ix))
	}
	r := finish(checks, ix.cov)
	r.Source = fmt.Sprintf("%s seed=%d", h.Family, h.Seed)
	return r
}

// spec is one check: its id, its name, the lowest level that requires
// it, the rule that judges it (checker/<id>.go), and whether its FAILED is
// money the ledger already holds and should not (MovedMoneyWrongly).
type spec struct {
	id, name, level string
	judge           func(*index) CheckResult
	movesMoney      bool
}

// catalog is every check, in report order (the order Check runs them):
// the one place a check's identity is written. It is filled in init
// because a judge starts its result from its row (newCheck): as a
// variable's initialiser, the table would refer to itself.
var catalog []spec

func init() {
	catalog = []spec{
		{"M1", "no double charge", "L1", (*index).m1, true},
		{"M2", "no phantom success", "L1", (*index).m2, false},
		{"M3", "no false failure", "L4", (*index).m3, true},
		{"M4", "consistent replay", "L1", (*index).m4, false},
		{"M5", "tenant isolation", "all", (*index).m5, false},
		{"M6", "convergence", "L4", (*index).m6, false},
		{"P1", "different payload refused", "L3", (*index).p1, false},
		{"P2", "equal payload recognised", "L3", (*index).p2, false},
		{"R1", "missing or invalid key gets 400", "all", (*index).r1, false},
		{"R2", "different payload gets 422", "all", (*index).r2, false},
		{"R3", "in-flight duplicate waits, then 409 with Retry-After", "all", (*index).r3, false},
		{"R4", "replay marker", "all", (*index).r4, false},
		{"R5", "success body names the order", "all", (*index).r5, false},
		{"E1", "no early expiry", "L5", (*index).e1, true},
		{"E2", "retry window covered", "L5", (*index).e2, true},
		{"A1", "accounting", "L1", (*index).a1, false},
		{"G1", "lock held by the server, not only the gateway", "all", (*index).g1, false},
		{"T1", "harness untouched", "all", (*index).t1, false},
	}
}

// specOf is the catalog's row for check id.
func specOf(id string) (spec, bool) {
	i := slices.IndexFunc(catalog, func(s spec) bool { return s.id == id })
	if i < 0 {
		return spec{}, false
	}
	return catalog[i], true
}

// CheckIDs lists every check's id, in report order: what an incident
// file's expectations may name.
func CheckIDs() []string {
	ids := make([]string, len(catalog))
	for i, s := range catalog {
		ids[i] = s.id
	}
	return ids
}

// CheckName is the name of check id ("" when there is none): how the
// catalogue of incidents spells an expectation.
func CheckName(id string) string {
	s, _ := specOf(id)
	return s.name
}

// newCheck starts a PASS, not yet exercised, result for check id.
func newCheck(id string) CheckResult {
	s, ok := specOf(id)
	if !ok {
		panic("checker: no check " + id)
	}
	return CheckResult{ID: id, Name: s.name, Level: s.level, Verdict: Pass}
}

// flag records a violation with verdict v; a violation always means the
// check was exercised.
func (c *CheckResult) flag(v Verdict, viol Violation) {
	viol.Invariant = c.ID
	slices.Sort(viol.Ops)
	viol.Ops = slices.Compact(viol.Ops)
	c.Violations = append(c.Violations, viol)
	c.Verdict = Worst(c.Verdict, v)
	c.Exercised = true
}

// onKey starts a violation about epoch e.
func onKey(e *epoch, orderID, format string, args ...any) Violation {
	return Violation{Tenant: e.lin.tenant, Key: e.lin.key, Order: orderID, Explanation: fmt.Sprintf(format, args...)}
}

// onOp starts a violation about a single request.
func onOp(o *opInfo, format string, args ...any) Violation {
	return Violation{Tenant: o.Tenant, Key: o.key, Order: o.Order, Ops: []int{o.ID}, Explanation: fmt.Sprintf(format, args...)}
}

// opIDs returns the ids of ops.
func opIDs(ops ...*opInfo) []int {
	var ids []int
	for _, o := range ops {
		if o != nil {
			ids = append(ids, o.ID)
		}
	}
	return ids
}

// chargeIDs returns the ids of charges.
func chargeIDs(cs ...*charge) []string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

// answer renders what the client was told: "201 ch_1", "402", "timeout".
func answer(o *opInfo) string {
	switch {
	case o.Outcome == history.OK:
		return fmt.Sprintf("%d %s", o.Status, o.ChargeID)
	case o.Status == 0:
		return "no response"
	default:
		return fmt.Sprint(o.Status)
	}
}

// listNote joins up to five items after a head, with a count of the rest.
func listNote(head string, items []string) string {
	if len(items) == 0 {
		return ""
	}
	const shown = 5
	s := head + ": " + strings.Join(items[:min(shown, len(items))], ", ")
	if len(items) > shown {
		s += fmt.Sprintf(" and %d more", len(items)-shown)
	}
	return s
}

// notes joins the non-empty parts of a note.
func notes(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

// NotJudged is the result of a family deliberately not played (its
// question cannot be asked of any server in this run, see
// NoProviderIdempotency): check id PASS but not exercised at level, with
// the note saying why. It earns nothing and fails nothing; the level it
// would certify is withheld by the ladder, whose note names the reason.
func NotJudged(id, level, note string) Result {
	c := newCheck(id)
	c.Level, c.Note = level, note
	return Result{Verdict: Pass, Level: "L0", Checks: []CheckResult{c}}
}

// Undecided is the result of a family that could not be judged at all
// (its examples do not fit the budget): check id UNKNOWN at level, with
// the catalog's name and the note saying why. UNKNOWN is never a pass.
func Undecided(id, level, note string) Result {
	c := newCheck(id)
	c.Level, c.Verdict, c.Note = level, Unknown, note
	return Result{Verdict: Unknown, Level: "L0", Checks: []CheckResult{c}}
}
