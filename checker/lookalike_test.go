package checker_test

import (
	"testing"

	"github.com/idemcheck/idemcheck/checker"
)

// TestCoverage_LookAlikePairs: two orders of one tenant with one amount and
// currency under two keys are a look-alike pair, charged when each has a
// charge of its own; another tenant's order, or an order's own retry, is
// not a pair.
func TestCoverage_LookAlikePairs(t *testing.T) {
	cases := []struct {
		name           string
		build          func(b *builder)
		pairs, charged int
	}{
		{"both charged", func(b *builder) {
			b.op("t1", "ka", "oa", 0, 10*ms, 201, "ch_a")
			b.op("t1", "kb", "ob", 5*ms, 15*ms, 201, "ch_b")
			b.charge("ch_a", "oa", 8*ms, "succeeded")
			b.charge("ch_b", "ob", 12*ms, "succeeded")
		}, 1, 1},
		{"second replayed the first's charge", func(b *builder) {
			b.op("t1", "ka", "oa", 0, 10*ms, 201, "ch_a")
			b.op("t1", "kb", "ob", 20*ms, 25*ms, 201, "ch_a")
			b.charge("ch_a", "oa", 8*ms, "succeeded")
		}, 1, 0},
		{"second stuck", func(b *builder) {
			b.op("t1", "ka", "oa", 0, 10*ms, 201, "ch_a")
			b.op("t1", "kb", "ob", 20*ms, 25*ms, 503, "")
			b.charge("ch_a", "oa", 8*ms, "succeeded")
		}, 1, 0},
		{"two tenants", func(b *builder) {
			b.op("t1", "ka", "oa", 0, 10*ms, 201, "ch_a")
			b.op("t2", "kb", "ob", 5*ms, 15*ms, 201, "ch_b")
			b.charge("ch_a", "oa", 8*ms, "succeeded")
			b.charge("ch_b", "ob", 12*ms, "succeeded")
		}, 0, 0},
		{"one order retried", func(b *builder) {
			b.op("t1", "ka", "oa", 0, 10*ms, 201, "ch_a")
			b.replay("t1", "ka", "oa", 20*ms, 25*ms, "ch_a")
			b.charge("ch_a", "oa", 8*ms, "succeeded")
		}, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder()
			tc.build(b)
			cov := checker.Check(b.history()).Coverage
			if cov.LookAlikePairs != tc.pairs || cov.LookAlikeCharged != tc.charged {
				t.Errorf("look-alike pairs %d, charged %d; want %d, %d", cov.LookAlikePairs, cov.LookAlikeCharged, tc.pairs, tc.charged)
			}
		})
	}
}
