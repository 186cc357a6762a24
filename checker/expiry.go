package checker

import (
	"fmt"
	"time"
)

// e1 judges E1 no early expiry: within the TTL of a key epoch, a retry is
// deduplicated. It is FAILED for every double charge inside one key epoch
// whose second charge was triggered by a request sent within the TTL of the
// epoch's first request, after the first charge was made and after some
// request of the epoch carrying its body had been answered definitively:
// the server held the key's result and forgot it. A duplicate sent before
// any answer raced the first request (the server never held a stored
// result): a concurrency failure, M1's, not an expiry. A double at the
// edge of the promise (see markEdges) is UNKNOWN. With no TTL declared the
// target promised forever, so every such double charge is early. It is
// exercised by definitive answers to retries late in the TTL, sent in
// [TTL/2, TTL] and clear of the edge band.
func (ix *index) e1() CheckResult {
	c := newCheck("E1")
	ttl := ix.pol.TTL
	var edge, raced []string
	for _, d := range ix.sameKeyDoubles() {
		t := d.second.trigger
		switch {
		case ttl > 0 && sinceFirst(d.second) > ttl:
			continue // E2's
		case t.Invoke < d.first.At || !answeredBefore(t):
			raced = append(raced, fmt.Sprintf("%s (op %d)", d.second.ID, t.ID))
		case d.atEdge():
			edge = append(edge, fmt.Sprintf("%s (op %d, sent %v after the key's first request)", d.second.ID, t.ID, sinceFirst(d.second)))
		default:
			c.flag(Failed, ix.expiryViolation(d, fmt.Sprintf("within the TTL (%s)", ttlText(ttl))))
		}
	}
	probes := ix.cov.ExpiryProbes
	c.Exercised = c.Exercised || probes > 0 || len(edge) > 0
	c.Note = notes(fmt.Sprintf("TTL %s; %d definitive answers to retries sent in [TTL/2, TTL]", ttlText(ttl), probes),
		listNote("double charges sent before the key had a definitive answer (a race: M1's, not expiry)", raced),
		ix.undecided(&c, edge))
	return c
}

// answeredBefore reports whether, before t was sent, some other request of
// its epoch carrying the key's body had been answered definitively: the
// server held the key's result when t arrived.
func answeredBefore(t *opInfo) bool {
	for _, o := range t.ep.equalOps() {
		if o != t && o.definitive() && o.Complete <= t.Invoke {
			return true
		}
	}
	return false
}

func ttlText(ttl time.Duration) string {
	if ttl <= 0 {
		return "not declared (forever)"
	}
	return ttl.String()
}

// e2 judges E2 retry window covered: a target that declares a retry window
// longer than its TTL promises to deduplicate retries sent in (TTL, retry
// window] after a key's first request. A double charge triggered there is
// FAILED, with the late retry and both charges shown. When the history sent
// retries past the TTL but none into that window, the declared window was
// not tested: UNKNOWN. When it sent no retry past the TTL at all, it is not
// an expiry history and E2 is not exercised (PASS, no level credit); this
// keeps every non-expiry family from ending UNKNOWN, while a certification
// (Merge) without any late retry still withholds L5. A retry window within
// the TTL is covered by E1: PASS, exercised when E1 is.
func (ix *index) e2() CheckResult {
	c := newCheck("E2")
	ttl, rw := ix.pol.TTL, ix.pol.RetryWindow
	if ttl <= 0 || rw <= ttl {
		c.Exercised = ttl > 0 && ix.cov.ExpiryProbes > 0
		c.Note = fmt.Sprintf("retry window %v within TTL %s: covered by E1", rw, ttlText(ttl))
		return c
	}
	var edge []string
	for _, d := range ix.sameKeyDoubles() {
		switch s := sinceFirst(d.second); {
		case s <= ttl || s > rw:
		case d.atEdge():
			edge = append(edge, fmt.Sprintf("%s (op %d, sent %v after the key's first request)", d.second.ID, d.second.trigger.ID, s))
		default:
			c.flag(Failed, ix.expiryViolation(d, fmt.Sprintf("after the TTL (%v) but inside the declared retry window (%v)", ttl, rw)))
		}
	}
	c.Exercised = c.Exercised || ix.cov.LateRetries > 0 || len(edge) > 0
	c.Note = notes(ix.e2Note(&c), ix.undecided(&c, edge))
	return c
}

// e2Note explains E2 and turns an untested declared window into UNKNOWN.
func (ix *index) e2Note(c *CheckResult) string {
	ttl, rw, cov := ix.pol.TTL, ix.pol.RetryWindow, ix.cov
	switch {
	case cov.LateRetries > 0 || len(c.Violations) > 0:
		return fmt.Sprintf("judged %d definitive answers to retries sent in (TTL %v, retry window %v]", cov.LateRetries, ttl, rw)
	case cov.PastTTL > 0:
		// Not exercised, so L5 is not credited; one example whose probes
		// all missed the window is no reason to call a whole run UNKNOWN
		// when others tested it (Merge: exercised if any history did).
		return fmt.Sprintf("not exercised: %d answered retries went past the TTL, none into (TTL %v, retry window %v]", cov.PastTTL, ttl, rw)
	default:
		return fmt.Sprintf("not exercised: no retry went past the TTL (%v)", ttl)
	}
}

// sameKeyDoubles returns every double charge inside one key epoch whose
// second charge was made while a request was in flight: a retry the server
// failed to deduplicate. A charge made after every request of its order
// had completed (a sweeper, a server finishing after the client gave up)
// answers no retry; it is M1's alone.
func (ix *index) sameKeyDoubles() []double {
	var out []double
	for _, ord := range ix.orders {
		ds, _ := doubles(ord)
		for _, d := range ds {
			if d.sameKey && d.second.inFlight {
				out = append(out, d)
			}
		}
	}
	return out
}

func (ix *index) expiryViolation(d double, where string) Violation {
	e, t := d.second.epoch(), d.second.trigger
	v := onKey(e, d.second.Order, "retry op %d, sent %v after the key's first request (op %d), %s, charged %s although %s was already charged at %v",
		t.ID, sinceFirst(d.second), e.ops[0].ID, where, d.second.ID, d.first.ID, d.first.At)
	v.Ops = opIDs(e.ops[0], d.first.trigger, t)
	v.Charges = chargeIDs(d.first, d.second)
	return v
}
