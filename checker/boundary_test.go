package checker_test

import (
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
