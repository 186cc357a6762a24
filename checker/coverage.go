package checker

import (
	"slices"
	"time"

	"github.com/idemcheck/idemcheck/history"
)

// coverage counts what the history exercised; see Coverage.
func (ix *index) coverage() Coverage {
	c := Coverage{
		Histories: 1,
		Ops:       len(ix.ops),
		Keys:      len(ix.lineages),
		Orders:    len(ix.orders),
		Tenants:   ix.tenants(),
		Faults:    len(disruptive(ix.own)),
		// CrashJudged is M6's to count: see m6.
		CrashFaults: len(ix.crashes),
		CrashPoints: crashPointsReached(ix.own),
		Stores:      slices.Clone(ix.h.Stores),
	}
	if !ix.h.Complete {
		c.Incomplete = 1
	}
	if ix.h.Gateway.NoIdempotency {
		c.NoGatewayIdempotency = 1
	}
	c.FaultKinds, c.MaxSkew = faultKinds(own(ix.h.Faults))
	c.CrossTenantKeys = len(ix.crossTenantKeys())
	c.LookAlikePairs, c.LookAlikeCharged = ix.lookAlikes()
	for _, e := range ix.eps {
		ix.coverEpoch(&c, e)
	}
	return c
}

// faultKinds counts faults by kind and finds their largest measured skew.
func faultKinds(fs []history.Fault) (map[string]int, time.Duration) {
	if len(fs) == 0 {
		return nil, 0
	}
	kinds := map[string]int{}
	var skew time.Duration
	for _, f := range fs {
		kinds[f.Name]++
		skew = max(skew, abs(f.Skew))
	}
	return kinds, skew
}

// own returns the faults the history's example injected itself: a
// foreign fault (another example's kill it lived through) counts for
// convergence and excuses (ix.faults), never as the example's coverage
// (crash points, crash-class faults, L4).
func own(fs []history.Fault) []history.Fault {
	var out []history.Fault
	for _, f := range fs {
		if f.Foreign == "" {
			out = append(out, f)
		}
	}
	return out
}

func (ix *index) tenants() int {
	seen := map[string]bool{}
	for _, o := range ix.ops {
		if o.Tenant != "" {
			seen[o.Tenant] = true
		}
	}
	return len(seen)
}

// crossTenantKeys returns the key strings that two or more tenants used,
// the traffic that probes tenant isolation. Requests without a bearer
// token (tenant "") belong to no tenant and do not count.
func (ix *index) crossTenantKeys() []string {
	first := make(map[string]string, len(ix.lineages))
	shared := map[string]bool{}
	var keys []string
	for _, l := range ix.lineages {
		if l.tenant == "" {
			continue
		}
		t, ok := first[l.key]
		switch {
		case !ok:
			first[l.key] = l.tenant
		case t != l.tenant && !shared[l.key]:
			shared[l.key] = true
			keys = append(keys, l.key)
		}
	}
	return keys
}

func (ix *index) coverEpoch(c *Coverage, e *epoch) {
	var defDone, lastDone time.Duration = -1, -1
	for _, o := range e.ops {
		if !o.equal {
			c.MutatedBodies++
			continue
		}
		if o != e.ref && o.Body != e.ref.Body {
			c.EquivalentBodies++
		}
		if defDone >= 0 && defDone <= o.Invoke {
			c.SequentialRetries++
		}
		if lastDone > o.Invoke {
			c.ConcurrentDuplicates++
		}
		ix.coverExpiry(c, e, o)
		lastDone = max(lastDone, o.Complete)
		if o.definitive() && (defDone < 0 || o.Complete < defDone) {
			defDone = o.Complete
		}
	}
}

// coverExpiry counts the definitive answers to retries that probe expiry:
// late in the TTL ([TTL/2, TTL], E1's traffic), past the TTL, and inside
// the extra retry window ((TTL, retry window], E2's traffic). A request that
// opened a later epoch of its key was sent past the promise, so past the TTL.
func (ix *index) coverExpiry(c *Coverage, e *epoch, o *opInfo) {
	ttl, rw := ix.pol.TTL, ix.pol.RetryWindow
	if ttl <= 0 || !o.definitive() {
		return
	}
	if o.edge {
		c.EdgeRetries++ // undecided: it probes nothing
		return
	}
	if o == e.ops[0] {
		if e.seq > 0 {
			c.PastTTL++
		}
		return
	}
	switch d := o.Invoke - e.start; {
	case d >= ttl/2 && d <= ttl:
		c.ExpiryProbes++
	case d > ttl:
		c.PastTTL++
		if d <= rw {
			c.LateRetries++
		}
	}
}
