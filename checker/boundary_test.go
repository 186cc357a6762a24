package checker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
)

// skewedRetry is a key charged twice: first at 0 on replica0, again by a
// retry at 18.5s, inside the 20s promise and clear of its 1s band, on
// replica1; skew is a clock_skew fault of 2.5s measured on the given
// replica over [inject, heal].
func skewedRetry(replica string, inject, heal time.Duration) *history.History {
	b := newBuilder()
	b.op("t", "k1", "ord", 0, 100*ms, 201, "ch_1")
	late := b.op("t", "k1", "ord", 18500*ms, 18600*ms, 201, "ch_2")
	late.Replica = 1
	b.charge("ch_1", "ord", 50*ms, "succeeded")
	b.charge("ch_2", "ord", 18550*ms, "succeeded")
	if replica != "" {
		b.h.Faults = append(b.h.Faults, history.Fault{Name: "clock_skew", Class: history.Crash, Target: replica,
			Inject: inject, Heal: heal, Healed: true, Fired: inject, Skew: 2500 * ms})
	}
	return b.history()
}

// TestEdge_ASkewedReplicaWidensTheBandWhereItCouldHaveCounted: a retry
// that is a plain E2 failure becomes UNKNOWN when a replica with a 2.5s
// skew took the key's first request, or was skewed near the promise's
// end, and stays FAILED when the skew was elsewhere, long before.
func TestEdge_ASkewedReplicaWidensTheBandWhereItCouldHaveCounted(t *testing.T) {
	for _, c := range []struct {
		name         string
		replica      string
		inject, heal time.Duration
		want         checker.Verdict
	}{
		{"no skew", "", 0, 0, checker.Failed},
		{"first request on the skewed replica", "replica0", -time.Second, 200 * ms, checker.Unknown},
		{"a replica skewed near the promise's end", "replica2", 17 * time.Second, 18 * time.Second, checker.Unknown},
		{"another replica skewed early on", "replica2", time.Second, 2 * time.Second, checker.Failed},
	} {
		r := checker.Check(skewedRetry(c.replica, c.inject, c.heal))
		if v, _ := r.Find("E2"); v.Verdict != c.want {
			t.Errorf("%s: E2 %s, want %s: %s", c.name, v.Verdict, c.want, v.Note)
		}
	}
}

// TestEdge_AnEpochOpenedAtTheEdgeMayEndEarly is exact-ttl seed 8 (promise
// 1s, judged P1 FAILED in a default certification): a different body sent
// 0.92s into the key's promise reached the server past it and opened a new
// server epoch, charged anew (at the edge: not judged). The checker's
// second epoch opens only with the next request, 0.58s later, whose body
// it takes as the key's; but the server's epoch ran from the edge request,
// so it had forgotten the key 2.17s in, when the first body came back and
// was charged anew, as an exact TTL must. That request may have come after
// the server's epoch ended: UNKNOWN, not P1 FAILED. A request well inside
// the server's epoch is still judged.
func TestEdge_AnEpochOpenedAtTheEdgeMayEndEarly(t *testing.T) {
	played := func(last time.Duration, charge string) *history.History {
		bld := newBuilder()
		bld.h.Policy.TTL, bld.h.Policy.RetryWindow = time.Second, time.Second
		other := func(o *history.Op) { o.Body = strings.Replace(o.Body, `}`, `,"description":"b"}`, 1) }
		bld.op("t", "k", "ord", 41*ms, 76*ms, 201, "ch_1")
		bld.charge("ch_1", "ord", 60*ms, "succeeded")
		other(bld.op("t", "k", "ord", 958*ms, 1107*ms, 201, "ch_2"))
		bld.charge("ch_2", "ord", 1090*ms, "succeeded")
		other(bld.replay("t", "k", "ord", 1541*ms, 1641*ms, "ch_2"))
		bld.op("t", "k", "ord", last, last+60*ms, 201, charge)
		if charge != "ch_2" {
			bld.charge(charge, "ord", last+30*ms, "succeeded")
		}
		return bld.history()
	}
	r := checker.Check(played(2169*ms, "ch_3"))
	for _, c := range r.Checks {
		if c.Verdict == checker.Failed {
			for _, v := range c.Violations {
				t.Logf("%s: %s", v.Invariant, v.Explanation)
			}
			t.Errorf("%s FAILED on a request that may have come after the server's epoch, opened at the edge, ended", c.ID)
		}
	}
	// 1.65s in, the server's epoch (opened at 0.96-1.11s) still holds the
	// second body: the first body charged anew there is P1.
	r = checker.Check(played(1650*ms, "ch_3"))
	if c, _ := r.Find("P1"); c.Verdict != checker.Failed {
		t.Errorf("P1 %s for a different body charged inside the server's epoch, want FAILED", c.Verdict)
	}
}
