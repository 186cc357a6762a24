package reports_test

import (
	"fmt"
	"testing"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/reports"
)

// TestHTML_DrawsCheckerViolations renders what the checker itself says
// about the sample history, so the drawing's ids follow the checker's
// violations, not only hand-written ones: every op, charge and fault a
// violation names is drawn, outlined as violating.
func TestHTML_DrawsCheckerViolations(t *testing.T) {
	h := crashHistory()
	res := checker.Check(h)
	r := sampleReport()
	r.Violations = nil
	for _, c := range res.Checks {
		for _, v := range c.Violations {
			r.Violations = append(r.Violations, reports.Violation{Violation: v, Family: "crash-window", Replay: "idemcheck replay x.yaml --target t"})
		}
	}
	if len(r.Violations) == 0 {
		t.Fatalf("checker found nothing in the sample history:\n%s", res)
	}
	_, doc := page(t, r)
	for i, v := range r.Violations {
		id := fmt.Sprintf("timeline-crash-window-%d", i+1)
		svg := byID(doc, id)
		if svg == nil {
			t.Fatalf("violation %d (%s) not drawn", i+1, v.Invariant)
		}
		var want []string
		for _, op := range v.Ops {
			want = append(want, fmt.Sprintf("%s-op-%d", id, op))
		}
		for _, ch := range v.Charges {
			want = append(want, id+"-charge-"+ch)
		}
		for _, f := range v.Faults {
			want = append(want, fmt.Sprintf("%s-fault-%d", id, f))
		}
		for _, el := range want {
			if n := byID(svg, el); n == nil || !hasClass(n, "violating") {
				t.Errorf("%s %q: %s not drawn as violating", v.Invariant, v.Explanation, el)
			}
		}
	}
}
