package checker_test

import (
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
)

// TestG1_GatewayHeldTheLock: two concurrent duplicates, one charge, and
// the gateway replayed it to the second: the money is right, but only the
// gateway kept it so; with a kill fired before the replay, it is recovery.
func TestG1_GatewayHeldTheLock(t *testing.T) {
	b := newBuilder()
	b.op("tenant_a", "k1", "ord_1", 0, 300*ms, 201, "ch_1")
	b.replay("tenant_a", "k1", "ord_1", 1*ms, 310*ms, "ch_1")
	b.charge("ch_1", "ord_1", 250*ms, "succeeded")
	b.h.GatewayReplays = []history.GatewayReplay{{Order: "ord_1", ChargeID: "ch_1", IdempotencyKey: "tenant_a-k1", At: 305 * ms}}
	r := checker.Check(&b.h)
	g1, _ := r.Find("G1")
	if g1.Verdict != checker.Informational || len(g1.Violations) != 1 || g1.Violations[0].Charges[0] != "ch_1" {
		t.Fatalf("G1 = %s %+v, want INFORMATIONAL naming ch_1", g1.Verdict, g1.Violations)
	}
	if r.Verdict == checker.Failed || r.Verdict == checker.Unknown {
		t.Errorf("verdict %s: a pass that only the gateway held is reported, not failed", r.Verdict)
	}

	b.h.Faults = []history.Fault{{ID: 0, Name: "kill", Target: "replica0", Inject: 100 * ms, Fired: 100 * ms, Heal: 200 * ms, Healed: true}}
	if g1, _ := checker.Check(&b.h).Find("G1"); g1.Verdict != checker.Pass || !g1.Exercised {
		t.Errorf("after a kill, a replay is recovery: G1 = %s exercised=%v", g1.Verdict, g1.Exercised)
	}
	b.h.Faults[0].Foreign = "crash-window#2" // another example's kill, lived through
	if g1, _ := checker.Check(&b.h).Find("G1"); g1.Verdict != checker.Pass {
		t.Errorf("after another example's kill, a replay is recovery: G1 = %s", g1.Verdict)
	}
}

// TestG1_ReplayAfterAStoreOutageIsRecovery: an owner that cannot reach its
// store cannot renew its lease, and a correct server then takes the key
// over and re-sends its recorded request: a replay within a recovery
// window of a store restart (another example's, lived through) or a store
// link cut is recovery. Long after the outage healed, it is the server's
// own doing again.
func TestG1_ReplayAfterAStoreOutageIsRecovery(t *testing.T) {
	b := newBuilder()
	b.h.Policy.RecoveryWindow = 2 * time.Second
	b.op("tenant_a", "k1", "ord_1", 0, 300*ms, 201, "ch_1")
	b.replay("tenant_a", "k1", "ord_1", 1*ms, 310*ms, "ch_1")
	b.charge("ch_1", "ord_1", 250*ms, "succeeded")
	b.h.GatewayReplays = []history.GatewayReplay{{Order: "ord_1", ChargeID: "ch_1", IdempotencyKey: "tenant_a-k1", At: 305 * ms}}
	for _, f := range []history.Fault{
		{Name: "store_restart", Target: "postgres", Class: history.Disturbs, Foreign: "crash-window#3", Inject: 50 * ms, Heal: 150 * ms, Healed: true},
		{Name: "down", Target: "replica1->redis", Class: history.Disturbs, Inject: 50 * ms, Heal: 150 * ms, Healed: true},
	} {
		b.h.Faults = []history.Fault{f}
		if g1, _ := checker.Check(&b.h).Find("G1"); g1.Verdict != checker.Pass {
			t.Errorf("after %s on %s: G1 = %s %v, want PASS (recovery)", f.Name, f.Target, g1.Verdict, g1.Violations)
		}
		b.h.GatewayReplays[0].At = 10 * time.Second
		if g1, _ := checker.Check(&b.h).Find("G1"); g1.Verdict != checker.Informational {
			t.Errorf("%s healed 9.85s before the replay: G1 = %s, want INFORMATIONAL", f.Name, g1.Verdict)
		}
		b.h.GatewayReplays[0].At = 305 * ms
	}
}
