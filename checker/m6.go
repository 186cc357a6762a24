package checker

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/idemcheck/idemcheck/history"
)

// m6 judges M6 convergence, for every epoch of a (tenant, key) in which a
// request carrying the key's body got an indeterminate answer (5xx, a
// retryable 4xx, timeout, reset). The key's final answer must be
// definitive and agree with the ledger: a 2xx names a succeeded charge; a
// failure means no request of the epoch moved money. The final answer is
// the one that completed last or, when that one is indeterminate, the last
// definitive answer to a request sent after recovery: a runner retries
// with backoff until the key converges, and a concurrent probe's 409 or
// 429 after that does not undo it. Earlier indeterminate answers (a
// replica still warming up) are tolerated. A final answer that is still
// indeterminate is FAILED when it was a retry (an earlier request was
// indeterminate too) sent after every fault injected before it had healed
// and the recovery window had passed: the key is stuck in progress. It is
// UNKNOWN when it was sent before that, or a fault never healed, or
// nothing was retried: the history did not give the key its chance to
// converge. A disagreement at the edge of the promise is UNKNOWN too.
// Keys that never got an indeterminate answer have nothing to converge;
// M2, M3 and M4 judge their answers.
//
// M6 is exercised only by keys disrupted by a 5xx or no answer: a 409 or
// 429 to a concurrent duplicate is the protocol working, not a crash. It
// also counts Coverage.CrashJudged, the judged keys that a fired
// crash-class fault struck, which L4 needs.
func (ix *index) m6() CheckResult {
	c := newCheck("M6")
	var unknown []string
	judged := 0
	for _, e := range ix.eps {
		ops := e.equalOps()
		if !anyIndeterminate(ops) {
			continue
		}
		viol, why := ix.converged(e, ops)
		switch {
		case why != "":
			unknown = append(unknown, fmt.Sprintf("%s/%s (%s)", e.lin.tenant, e.lin.key, why))
			continue
		case viol != nil:
			c.flag(Failed, *viol)
		}
		if disrupted(ops) {
			judged++
		}
		if len(ix.struckBy(e)) > 0 {
			ix.cov.CrashJudged++
		}
	}
	if len(unknown) > 0 {
		c.Verdict = Worst(c.Verdict, Unknown)
	}
	c.Exercised = c.Exercised || judged > 0
	c.Note = notes(fmt.Sprintf("judged %d keys after a 5xx or no answer, %d of them struck by a crash", judged, ix.cov.CrashJudged),
		listNote(fmt.Sprintf("%d keys undecided", len(unknown)), unknown))
	return c
}

// disrupted reports whether some op got a 5xx or no answer at all.
func disrupted(ops []*opInfo) bool {
	return slices.ContainsFunc(ops, func(o *opInfo) bool {
		return !o.definitive() && (o.Status == 0 || o.Status >= 500)
	})
}

func anyIndeterminate(ops []*opInfo) bool {
	for _, o := range ops {
		if !o.definitive() {
			return true
		}
	}
	return false
}

// final returns the answer that completed last.
func final(ops []*opInfo) *opInfo {
	return slices.MaxFunc(ops, func(a, b *opInfo) int {
		return cmp.Or(cmp.Compare(a.Complete, b.Complete), byInvoke(a, b))
	})
}

// converged judges one epoch: a violation, or why it is undecided, or
// neither (converged and consistent with the ledger).
func (ix *index) converged(e *epoch, ops []*opInfo) (*Violation, string) {
	f := final(ops)
	if !f.definitive() {
		f = cmp.Or(ix.lastQuietDefinitive(ops), f)
	}
	if f.definitive() {
		v := ix.agrees(e, f)
		if v != nil && f.edge {
			return nil, fmt.Sprintf("op %d, sent at the edge of the promise, disagrees with the ledger", f.ID)
		}
		return v, ""
	}
	if ids := ix.unhealed(f.Complete); len(ids) > 0 {
		return nil, fmt.Sprintf("fault %v never healed", ids)
	}
	if !ix.quiet(f) {
		if end := e.start + ix.promise; ix.promise > 0 && end < ix.quietAt(end) {
			return nil, fmt.Sprintf("its promise, max(ttl, retry_window) = %v from op %d, ended before faults healed + recovery window %v: a longer policy.retry_window lets M6 judge it",
				ix.promise, e.ops[0].ID, ix.pol.RecoveryWindow)
		}
		return nil, fmt.Sprintf("last retry, op %d, sent before faults healed + recovery window %v", f.ID, ix.pol.RecoveryWindow)
	}
	if !retried(ops, f) {
		return nil, fmt.Sprintf("op %d was not retried", f.ID)
	}
	v := onKey(e, f.Order, "still indeterminate after recovery: op %d, sent after every fault had healed and the recovery window (%v) had passed, got %s, and no later answer resolved the key",
		f.ID, ix.pol.RecoveryWindow, answer(f))
	v.Ops = opIDs(ops...)
	v.Faults = ix.faultsDuring(e.start, f.Complete)
	return &v, ""
}

// lastQuietDefinitive returns the definitive answer that completed last
// among requests sent after recovery (see quiet), or nil.
func (ix *index) lastQuietDefinitive(ops []*opInfo) *opInfo {
	var last *opInfo
	for _, o := range ops {
		if o.definitive() && ix.quiet(o) && (last == nil || o.Complete > last.Complete) {
			last = o
		}
	}
	return last
}

// retried reports whether some request before f was indeterminate too, so
// that f is a retry after an indeterminate answer.
func retried(ops []*opInfo, f *opInfo) bool {
	for _, o := range ops {
		if o != f && !o.definitive() && o.Invoke <= f.Invoke {
			return true
		}
	}
	return false
}

// agrees returns a violation when the final definitive answer f disagrees
// with the ledger, or nil.
func (ix *index) agrees(e *epoch, f *opInfo) *Violation {
	var v Violation
	switch {
	case f.Outcome == history.OK && !ix.succeeded(f.ChargeID):
		v = onKey(e, f.Order, "converged on %s (op %d), but the ledger holds no succeeded charge %s", answer(f), f.ID, f.ChargeID)
	case f.Outcome == history.Fail && len(e.charges) > 0:
		v = onKey(e, f.Order, "converged on failure %d (op %d), but the ledger holds succeeded charge %s made through this key", f.Status, f.ID, e.charges[0].ID)
		v.Charges = chargeIDs(e.charges...)
	default:
		return nil
	}
	v.Ops = []int{f.ID}
	v.Faults = ix.faultsDuring(e.start, f.Complete)
	return &v
}

// succeeded reports whether the ledger holds id as a succeeded charge.
func (ix *index) succeeded(id string) bool {
	ch := ix.charges[id]
	return ch != nil && ch.Succeeded()
}
