package checker

import (
	"fmt"
	"slices"

	"github.com/idemcheck/idemcheck/history"
)

// p1 judges P1 different payload refused: a request that differs
// canonically (canonicalizer: its path, or its body by RFC 8785 or by
// its form parameters) from its key epoch's reference request must never get
// a 2xx, never a replay of the stored failure (the same 402 the key's body
// got), and must never be processed: no ledger charge, succeeded or
// declined, may have been triggered by it.
func (ix *index) p1() CheckResult {
	c := newCheck("P1")
	n := 0
	var edge, unheld []string
	for _, e := range ix.eps {
		first := firstAnswer(e)
		for _, o := range e.ops {
			if o.equal || o.carried {
				continue
			}
			n++
			why := accepted(o, first)
			if why != "" && o.edge {
				edge = append(edge, fmt.Sprintf("op %d %s", o.ID, why))
				continue
			}
			if why != "" && !bodyHeld(e, first, o) {
				unheld = append(unheld, fmt.Sprintf("op %d %s", o.ID, why))
				continue
			}
			if why != "" {
				v := onOp(o, "%s %s under the same key and %s", opName(o), difference(o, e.ref), why)
				v.Ops = append(v.Ops, e.ref.ID)
				v.Charges = chargeIDs(o.made...)
				if o.Outcome == history.OK && !slices.Contains(v.Charges, o.ChargeID) {
					v.Charges = append(v.Charges, o.ChargeID)
				}
				c.flag(Failed, v)
			}
		}
	}
	c.Exercised = c.Exercised || n > 0
	c.Note = notes(fmt.Sprintf("judged %d requests with a different body", n), ix.undecided(&c, edge),
		listNote("UNKNOWN: the key's first body may never have been stored (every request with it before was answered 5xx or not at all, and none charged)", unheld))
	if len(unheld) > 0 {
		c.Verdict = Worst(c.Verdict, Unknown)
	}
	return c
}

// difference says how o's request differs from the key's reference
// request: its path (an order id in the path), else its body.
func difference(o, ref *opInfo) string {
	if o.Method != ref.Method || o.Path != ref.Path {
		return fmt.Sprintf("was sent to %s %s, another request than op %d's %s %s,", o.Method, o.Path, ref.ID, ref.Method, ref.Path)
	}
	return fmt.Sprintf("carried a body different from op %d's", ref.ID)
}

// bodyHeld says whether the server provably held the key's reference body
// when o was sent: its first answer (firstAnswer) came before o was sent,
// or a request with it charged. A reference request answered 5xx (a claim
// that failed on a broken database connection) or not at all may have
// left no record, and then o is the key's first body as far as the server
// knows: accepting it proves nothing (a first request answered 503, then
// a second with another body answered 201, is no payload violation).
func bodyHeld(e *epoch, first, o *opInfo) bool {
	if first != nil && first.Complete < o.Invoke {
		return true
	}
	return slices.ContainsFunc(e.equalOps(), func(r *opInfo) bool { return len(r.made) > 0 })
}

// firstAnswer returns the first definitive answer (by completion) to a
// request of e carrying the reference body, or nil.
func firstAnswer(e *epoch) *opInfo {
	var first *opInfo // the first of definitives(e.equalOps()), without the copy
	for _, o := range e.equalOps() {
		if o.definitive() && (first == nil || o.Complete < first.Complete) {
			first = o
		}
	}
	return first
}

// accepted returns how a different-body request o was accepted, or "".
func accepted(o *opInfo, first *opInfo) string {
	switch {
	case o.Outcome == history.OK && first != nil && first.Outcome == history.OK && o.ChargeID == first.ChargeID:
		return "got a replay of the first answer, " + answer(o)
	case o.Outcome == history.OK:
		return "got " + answer(o)
	case replaysFailure(o, first):
		return fmt.Sprintf("got a replay of the stored %d", o.Status)
	case len(o.made) > 0:
		return fmt.Sprintf("was processed: the ledger holds charge %s (%s) it triggered", o.made[0].ID, o.made[0].Status)
	}
	return ""
}

// replaysFailure reports whether o's failure repeats the key's stored
// failure (other than 422, which is the right answer to a different body,
// and a refusal before processing, see unprocessed).
func replaysFailure(o, first *opInfo) bool {
	return o.Outcome == history.Fail && o.Status != 422 && !unprocessed(o.Status) && first != nil &&
		first.Outcome == history.Fail && first.Status == o.Status
}

// unprocessed says whether a failure status refuses a request before it is
// processed: 401 or 403, its credentials missing or refused. Such a
// refusal stores nothing under the key, so two requests refused alike
// were each told about their own credentials, not given a stored answer.
func unprocessed(status int) bool { return status == 401 || status == 403 }

// p2 judges P2 equal payload recognised: a request whose body is
// canonically equal to its key epoch's reference body must never be refused
// as different. It is FAILED on a 422, and on any other failure that is not
// the key's stored answer (after the first definitive answer, only a
// replay of that same answer is right). The first definitive answer itself
// may be any failure but 422: a decline, say.
func (ix *index) p2() CheckResult {
	c := newCheck("P2")
	n, bytewise := 0, 0
	var edge []string
	for _, e := range ix.eps {
		defs := definitives(e.equalOps())
		for i, o := range defs {
			n++
			if o.Body != e.ref.Body {
				bytewise++
			}
			why := refused(o, defs[:i])
			if why != "" && e.rememberedOther(o) {
				continue // the server may still compare with an earlier epoch's body
			}
			if why != "" && o.edge {
				edge = append(edge, fmt.Sprintf("op %d %s", o.ID, why))
				continue
			}
			if why != "" {
				v := onOp(o, "%s carried a body equal to op %d's and %s", opName(o), e.ref.ID, why)
				v.Ops = append(v.Ops, e.ref.ID)
				c.flag(Failed, v)
			}
		}
	}
	c.Exercised = c.Exercised || bytewise > 0
	c.Note = notes(fmt.Sprintf("judged %d answers to equal bodies, %d of them byte-different (exercised only by those)", n, bytewise), ix.undecided(&c, edge))
	return c
}

// rememberedOther reports whether o's body differs from the body of an
// earlier epoch of its key. Past a promise's end a server may forget the
// key or keep it (longer retention is allowed); one that kept it compares
// with the earlier body, and refusing o as different is then right.
func (e *epoch) rememberedOther(o *opInfo) bool {
	for _, prev := range e.lin.epochs[:e.seq] {
		if prev.ref.canon != o.canon {
			return true
		}
	}
	return false
}

// refused returns why o's answer refuses an equal body, or "". earlier
// holds the definitive answers that completed before o.
func refused(o *opInfo, earlier []*opInfo) string {
	switch {
	case o.Outcome != history.Fail:
		return ""
	case o.Status == 422:
		return "was refused with 422 as a different payload"
	case len(earlier) > 0 && sameAnswer(earlier[0]) != sameAnswer(o):
		return fmt.Sprintf("was refused with %d after op %d had got %s", o.Status, earlier[0].ID, answer(earlier[0]))
	}
	return ""
}
