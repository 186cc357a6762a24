package checker_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/internal/procstat"
)

// TestGenerated_LargeCleanHistoryPasses: a 10,000-op history of a correct
// server has no violation, and a single double charge planted in it is
// found and named.
func TestGenerated_LargeCleanHistoryPasses(t *testing.T) {
	h := generate(10_000, 1)
	r := checker.Check(h)
	expectVerdicts(t, r, map[string]checker.Verdict{})
	if r.Level != "L3" {
		t.Fatalf("level %s (%s), want L3: no faults in the generated history", r.Level, r.LevelNote)
	}

	dup := h.Ops[0]
	dup.ID, dup.Invoke, dup.Complete, dup.ChargeID = len(h.Ops), dup.Complete+50*ms, dup.Complete+90*ms, "ch_dup"
	h.Ops = append(h.Ops, dup)
	h.Charges = append(h.Charges, history.Charge{ID: "ch_dup", Order: dup.Order, Amount: 1250, Currency: "usd", Status: "succeeded", At: dup.Invoke + 10*ms})
	r = checker.Check(h)
	c, _ := r.Find("M1")
	if c.Verdict != checker.Failed || len(c.Violations) != 1 || c.Violations[0].Charges[1] != "ch_dup" {
		t.Fatalf("planted double charge: M1 %s %+v", c.Verdict, c.Violations)
	}
}

// BenchmarkCheck judges generated histories of 10 thousand, 100 thousand
// and a million ops, one history each: the checker's cost is linear in
// the ops (ns/op per op stays flat), and a million judge in under 10 s
// here. Beside the wall time: cpu-s/op, the CPU time one judgement used
// (the process's, garbage collection included: what a busy shared machine
// does not inflate), and B/kop, the bytes it allocates per thousand ops
// of its history.
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("%dops", n), func(b *testing.B) {
			h := generate(n, 1)
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu := procstat.Self()
			b.ResetTimer()
			for b.Loop() {
				checker.Check(h)
			}
			b.StopTimer()
			cpu = procstat.Self() - cpu
			runtime.ReadMemStats(&after)
			perKop := float64(len(h.Ops)) / 1000 * float64(b.N)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(h.Ops)), "ns/history-op")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/perKop, "B/kop")
		})
	}
}
