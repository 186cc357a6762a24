package checker

import (
	"fmt"
	"time"
)

// e1 judges E1 no early expiry: within the TTL of a key epoch, a retry is
// deduplicated. It is FAILED for every double charge inside one key epoch
// whose second charge was triggered by a request sent within the TTL of the
// epoch's first request and after the first charge was made: the server had
// stored the key's result and forgot it. (A duplicate that raced the first
// charge is a concurrency failure, M1's, not an expiry.) With no TTL
// declared the target promised forever, so every such double charge is
// early. It is exercised by retries late in the TTL, in [TTL/2, TTL].
func (ix *index) e1() CheckResult {
	c := newCheck("E1")
	ttl := ix.pol.TTL
	for _, d := range ix.sameKeyDoubles() {
		t := d.second.trigger
		if (ttl <= 0 || sinceFirst(d.second) <= ttl) && t.Invoke >= d.first.At {
			c.flag(Failed, ix.expiryViolation(d, fmt.Sprintf("within the TTL (%s)", ttlText(ttl))))
		}
	}
	probes := ix.cov.ExpiryProbes
	c.Exercised = c.Exercised || probes > 0
	c.Note = fmt.Sprintf("TTL %s; %d definitive answers to retries sent in [TTL/2, TTL]", ttlText(ttl), probes)
	return c
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
	for _, d := range ix.sameKeyDoubles() {
		if s := sinceFirst(d.second); s > ttl && s <= rw {
			c.flag(Failed, ix.expiryViolation(d, fmt.Sprintf("after the TTL (%v) but inside the declared retry window (%v)", ttl, rw)))
		}
	}
	c.Exercised = c.Exercised || ix.cov.LateRetries > 0
	c.Note = ix.e2Note(&c)
	return c
}

// e2Note explains E2 and turns an untested declared window into UNKNOWN.
func (ix *index) e2Note(c *CheckResult) string {
	ttl, rw, cov := ix.pol.TTL, ix.pol.RetryWindow, ix.cov
	switch {
	case cov.LateRetries > 0 || len(c.Violations) > 0:
		return fmt.Sprintf("judged %d definitive answers to retries sent in (TTL %v, retry window %v]", cov.LateRetries, ttl, rw)
	case cov.PastTTL > 0:
		c.Verdict = Worst(c.Verdict, Unknown)
		return fmt.Sprintf("%d answered retries went past the TTL, none into (TTL %v, retry window %v]: the declared window was not tested", cov.PastTTL, ttl, rw)
	default:
		return fmt.Sprintf("not exercised: no retry went past the TTL (%v)", ttl)
	}
}

// sameKeyDoubles returns every double charge inside one key epoch.
func (ix *index) sameKeyDoubles() []double {
	var out []double
	for _, ord := range ix.orders {
		ds, _ := doubles(ord)
		for _, d := range ds {
			if d.sameKey {
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
