package checker

import (
	"fmt"

	"github.com/idemcheck/idemcheck/history"
)

// m3 judges M3 no false failure. A definitive failure tells the client to
// pay some other way, so (a) within one epoch of a (tenant, key), once a
// request carrying the key's body got a definitive failure, no request of
// that epoch may have moved money; and (b) no request that got a definitive
// failure (a mutated body's 422, a keyless request's 400) may itself have
// triggered a succeeded charge. A decline (402 with a "failed" ledger
// charge) moved no money and is fine; the same order charged under another
// key is not this key's doing. Only failures to a key's own body (a
// decline, say) exercise M3: a 422 to a different body, or a 400 to a
// keyless request, is judged but says nothing about crash safety.
func (ix *index) m3() CheckResult {
	c := newCheck("M3")
	n, own := 0, 0
	var edge []string
	for _, e := range ix.eps {
		fails := failures(e.equalOps())
		n += len(fails)
		own += len(fails)
		switch {
		case len(fails) == 0 || len(e.charges) == 0:
		case len(clearOfEdge(fails)) > 0 && len(clearCharges(e.charges)) > 0:
			c.flag(Failed, falseFailure(e, clearOfEdge(fails), clearCharges(e.charges)))
		default:
			edge = append(edge, fmt.Sprintf("%s/%s", e.lin.tenant, e.lin.key))
		}
	}
	for _, o := range ix.ops {
		if o.Outcome != history.Fail || (o.keyed && o.equal) {
			continue
		}
		n++
		if ch := moved(o); ch != nil {
			v := onOp(o, "%s was refused with %d, yet it triggered succeeded charge %s", opName(o), o.Status, ch.ID)
			v.Charges = []string{ch.ID}
			c.flag(Failed, v)
		}
	}
	c.Exercised = c.Exercised || own > 0
	c.Note = notes(fmt.Sprintf("judged %d definitive failures against the ledger, %d of them to a key's own body", n, own), ix.undecided(&c, edge))
	return c
}

// clearCharges returns the charges not triggered at an epoch's edge.
func clearCharges(cs []*charge) []*charge {
	var out []*charge
	for _, ch := range cs {
		if !ch.trigger.edge {
			out = append(out, ch)
		}
	}
	return out
}

// failures returns the ops that got a definitive failure.
func failures(ops []*opInfo) []*opInfo {
	var out []*opInfo
	for _, o := range ops {
		if o.Outcome == history.Fail {
			out = append(out, o)
		}
	}
	return out
}

// moved returns the first succeeded charge o triggered, or nil.
func moved(o *opInfo) *charge {
	for _, ch := range o.made {
		if ch.Succeeded() {
			return ch
		}
	}
	return nil
}

func falseFailure(e *epoch, fails []*opInfo, charges []*charge) Violation {
	ch := charges[0]
	v := onKey(e, ch.Order, "key answered %s to op %d but the ledger holds succeeded charge %s for order %s, triggered by op %d through this key",
		answer(fails[0]), fails[0].ID, ch.ID, ch.Order, ch.trigger.ID)
	v.Ops = append(opIDs(fails...), opIDs(triggers(charges)...)...)
	v.Charges = chargeIDs(charges...)
	return v
}

// triggers returns the requests that triggered cs.
func triggers(cs []*charge) []*opInfo {
	out := make([]*opInfo, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.trigger)
	}
	return out
}
