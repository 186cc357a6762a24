package checker

import (
	"fmt"
	"slices"
	"time"
)

// double is a second succeeded charge for one order that a correct server
// would not have made.
type double struct {
	first, second *charge
	// sameKey is true when both charges were triggered inside one epoch of
	// one (tenant, key): the deduplication the protocol promises failed.
	// Otherwise one of them came from a request without a valid key (which
	// a conforming server refuses) or from no request at all.
	sameKey bool
}

// epoch returns the key epoch a double concerns, or nil.
func (d double) epoch() *epoch {
	if e := d.second.epoch(); e != nil {
		return e
	}
	return d.first.epoch()
}

// doubles returns ord's double charges, and the repeat charges a correct
// server could have made too: ones triggered in another epoch of their key
// (sent after first request + max(TTL, retry window)) or under another
// (tenant, key) (the workload sent the order under several keys, which no
// server can deduplicate). A charge triggered by a request without a valid
// key, or by no request, is never excused: a conforming server makes none.
func doubles(ord *order) (ds []double, again []*charge) {
	succ := ord.succeeded()
	if len(succ) < 2 {
		return nil, nil
	}
	firstIn := map[*epoch]*charge{}
	seen := map[[2]string]bool{}
	for i, c := range succ {
		e := c.epoch()
		switch {
		case e == nil:
			ds = appendPair(ds, seen, c, partner(succ, c))
		case firstIn[e] != nil:
			ds = append(ds, double{first: firstIn[e], second: c, sameKey: true})
		default:
			firstIn[e] = c
			if i > 0 {
				again = append(again, c)
			}
		}
	}
	return ds, excused(again, ds)
}

// excused drops from again the charges that a double names anyway.
func excused(again []*charge, ds []double) []*charge {
	var out []*charge
	for _, c := range again {
		if !slices.ContainsFunc(ds, func(d double) bool { return d.first == c || d.second == c }) {
			out = append(out, c)
		}
	}
	return out
}

// partner returns the first charge of succ other than c.
func partner(succ []*charge, c *charge) *charge {
	if succ[0] != c {
		return succ[0]
	}
	return succ[1]
}

// appendPair adds the unkeyed double {a, b}, in ledger order, once.
func appendPair(ds []double, seen map[[2]string]bool, a, b *charge) []double {
	if b.At < a.At || (b.At == a.At && b.ID < a.ID) {
		a, b = b, a
	}
	k := [2]string{a.ID, b.ID}
	if seen[k] {
		return ds
	}
	seen[k] = true
	return append(ds, double{first: a, second: b})
}

// m1 judges M1 no double charge: at most one succeeded ledger charge per
// order, except repeats outside every promise (see doubles), which are
// listed in the note and left to E1/E2.
func (ix *index) m1() CheckResult {
	c := newCheck("M1")
	var again, late, orphans, edge []string
	judged, retried := 0, 0
	for _, ord := range ix.orders {
		judged += len(ord.succeeded())
		if len(ord.ops) > 1 {
			retried++
		}
		ds, ag := doubles(ord)
		for _, d := range ds {
			if d.atEdge() {
				edge = append(edge, fmt.Sprintf("%s then %s (%s)", d.first.ID, d.second.ID, ord.id))
				continue
			}
			c.flag(Failed, ix.m1Violation(ord, d))
		}
		for _, ch := range ag {
			again = append(again, fmt.Sprintf("%s (%s)", ch.ID, ord.id))
		}
		l, o := untimely(ord)
		late, orphans = append(late, l...), append(orphans, o...)
	}
	c.Exercised = c.Exercised || retried > 0 || len(edge) > 0
	c.Note = notes(
		fmt.Sprintf("judged %d succeeded charges over %d orders, %d of them requested more than once", judged, len(ix.orders), retried),
		listNote("charged again outside every promise (a later epoch of the key, or another key), not held against M1", again),
		listNote("made while no request of the order was in flight, attributed to the latest earlier request", late),
		listNote("made before any request of the order was sent (clock skew, or money moved unasked)", orphans),
		ix.undecided(&c, edge),
	)
	return c
}

// atEdge reports whether a same-key double involves a request sent in the
// undecided band at the end of the key's promise: the server may have
// expired the key by its own clock, so the double is neither proven nor
// excused.
func (d double) atEdge() bool {
	return d.sameKey && anyEdge(d.first.trigger, d.second.trigger)
}

// untimely returns the charges of ord made while none of its requests was
// in flight (late), and those made before any was sent (orphans).
func untimely(ord *order) (late, orphans []string) {
	for _, ch := range ord.charges {
		switch {
		case ch.trigger == nil:
			orphans = append(orphans, ch.ID)
		case !ch.inFlight:
			late = append(late, ch.ID)
		}
	}
	return late, orphans
}

// m1Violation names both charges, their triggers and every request of the
// order whose answer named either charge.
func (ix *index) m1Violation(ord *order, d double) Violation {
	v := Violation{Order: ord.id, Charges: chargeIDs(d.first, d.second)}
	if e := d.epoch(); e != nil {
		v.Tenant, v.Key = e.lin.tenant, e.lin.key
	}
	v.Ops = opIDs(d.first.trigger, d.second.trigger)
	for _, o := range ord.ops {
		if o.ChargeID == d.first.ID || o.ChargeID == d.second.ID {
			v.Ops = append(v.Ops, o.ID)
		}
	}
	v.Explanation = ix.explainDouble(ord, d) + ix.providerPart(d)
	return v
}

func (ix *index) explainDouble(ord *order, d double) string {
	head := fmt.Sprintf("order %s charged twice: %s at %v, then %s at %v", ord.id, d.first.ID, d.first.At, d.second.ID, d.second.At)
	t := d.second.trigger
	switch {
	case d.sameKey:
		return fmt.Sprintf("%s, triggered by op %d sent %v after the key's first request (promise %s)",
			head, t.ID, t.Invoke-t.ep.start, ix.promiseText())
	case d.first.trigger == nil || t == nil:
		return head + "; one of them while no request of the order had been sent"
	default:
		return head + "; one of them triggered by a request without a valid key, which a conforming server refuses with 400"
	}
}

// promiseText renders how long the target promised to remember a key.
func (ix *index) promiseText() string {
	if ix.promise == 0 {
		return "forever: no TTL declared"
	}
	return "max(TTL, retry window) = " + ix.promise.String()
}

// sinceFirst is how long after its key epoch opened the request that
// triggered charge c was sent.
func sinceFirst(c *charge) time.Duration { return c.trigger.Invoke - c.trigger.ep.start }
