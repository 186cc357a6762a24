package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

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
		defs := notCarried(e, definitives(e.equalOps()))
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

// notCarried drops from defs, the definitive answers of epoch e in
// completion order, those the server may have given from the key's
// previous epoch: a promise is how long a server keeps a key at least,
// and one that keeps it longer (a lazy sweep, a TTL longer than the one
// declared) replays the previous epoch's answer past the promise, then
// forgets the key and answers anew. The checker's epoch opens at the
// first request past the promise, the server's at the first request it
// took after forgetting the key, which was sent before any request
// answered anew was answered. So an answer equal to the previous epoch's
// one (for the same body) and sent before the first request that got
// another answer completed is the server's previous epoch, not this one
// (a reference server keeping keys 4s under a declared 2s was judged M4
// FAILED on exactly that). Sent later, it is judged as before: a server
// that answered anew and then went back to the old answer is
// inconsistent.
func notCarried(e *epoch, defs []*opInfo) []*opInfo {
	if e.seq == 0 || len(defs) < 2 {
		return defs
	}
	prev := e.lin.epochs[e.seq-1]
	if prev.ref == nil || e.ref == nil || prev.ref.canon != e.ref.canon {
		return defs
	}
	olds := distinctAnswers(definitives(prev.equalOps()))
	if len(olds) != 1 {
		return defs
	}
	old := sameAnswer(olds[0])
	opened := time.Duration(-1) // the earliest completion of an answer anew
	for _, o := range defs {
		if sameAnswer(o) != old && (opened < 0 || o.Complete < opened) {
			opened = o.Complete
		}
	}
	if opened < 0 {
		return defs
	}
	var out []*opInfo
	for _, o := range defs {
		if sameAnswer(o) == old && o.Invoke < opened {
			continue
		}
		out = append(out, o)
	}
	return out
}

// definitives returns the definitive answers among ops, in completion order.
func definitives(ops []*opInfo) []*opInfo {
	var out []*opInfo
	for _, o := range ops {
		if o.definitive() {
			out = append(out, o)
		}
	}
	slices.SortStableFunc(out, func(a, b *opInfo) int { return cmp.Compare(a.Complete, b.Complete) })
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
