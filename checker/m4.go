package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/history"
)

// m4 judges M4 consistent replay: within one epoch of a (tenant, key),
// every definitive answer to a request carrying the key's body (or a
// canonically equal one) is the same answer: one charge id for every 2xx,
// one status for every failure, never a failure on one try and a success
// on another. The violation shows the first request that got each answer.
func (ix *index) m4() CheckResult {
	c := newCheck("M4")
	n, replayed := 0, 0
	var edge []string
	for _, e := range ix.eps {
		defs := definitives(e.equalOps())
		n += len(defs)
		if len(defs) > 1 {
			replayed++
		}
		switch firsts := distinctAnswers(defs); {
		case len(firsts) <= 1:
		case len(distinctAnswers(clearOfEdge(defs))) > 1:
			c.flag(Failed, inconsistent(e, distinctAnswers(clearOfEdge(defs))))
		default:
			edge = append(edge, fmt.Sprintf("%s/%s", e.lin.tenant, e.lin.key))
		}
	}
	c.Exercised = c.Exercised || replayed > 0
	c.Note = notes(fmt.Sprintf("judged %d definitive answers; %d key epochs answered more than once", n, replayed), ix.undecided(&c, edge))
	return c
}

// definitives returns the definitive answers among ops, in completion order.
func definitives(ops []*opInfo) []*opInfo {
	n := 0
	for _, o := range ops {
		if o.definitive() {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]*opInfo, 0, n)
	for _, o := range ops {
		if o.definitive() {
			out = append(out, o)
		}
	}
	byComplete := func(a, b *opInfo) int { return cmp.Compare(a.Complete, b.Complete) }
	if !slices.IsSortedFunc(out, byComplete) { // sorted already, the stable sort would leave it
		slices.SortStableFunc(out, byComplete)
	}
	return out
}

// clearOfEdge returns the ops not sent at an epoch's edge.
func clearOfEdge(ops []*opInfo) []*opInfo {
	var out []*opInfo
	for _, o := range ops {
		if !o.edge {
			out = append(out, o)
		}
	}
	return out
}

// sameAnswer is the identity M4 compares: a charge id or a failure status.
func sameAnswer(o *opInfo) string {
	if o.Outcome == history.OK {
		return "charge " + o.ChargeID
	}
	return fmt.Sprintf("status %d", o.Status)
}

// distinctAnswers returns the first op to get each distinct answer.
func distinctAnswers(defs []*opInfo) []*opInfo {
	seen := map[string]bool{}
	var firsts []*opInfo
	for _, o := range defs {
		if a := sameAnswer(o); !seen[a] {
			seen[a] = true
			firsts = append(firsts, o)
		}
	}
	return firsts
}

func inconsistent(e *epoch, firsts []*opInfo) Violation {
	parts := make([]string, len(firsts))
	var charges []string
	for i, o := range firsts {
		parts[i] = fmt.Sprintf("op %d got %s", o.ID, answer(o))
		if o.Outcome == history.OK {
			charges = append(charges, o.ChargeID)
		}
	}
	v := onKey(e, e.ref.Order, "one key, one body, %d different answers: %s", len(firsts), strings.Join(parts, ", "))
	v.Ops = opIDs(firsts...)
	v.Charges = charges
	return v
}
