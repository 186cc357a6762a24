package certify_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/scenarios"
)

// The regression table, our own incidents and the public catalogue
// (scenarios/incidents/public/): every incident reproduces its expected
// verdicts against the member that has the bug, and the reference passes
// it.
func TestIncidents_ReproduceAndReferencePasses(t *testing.T) {
	dir := binDir(t)
	incs, err := scenarios.Incidents()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range incs {
		t.Run(in.File, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			ex, err := certify.Replay(ctx, member(t, in.Scenario.Target, dir), in.Scenario, certify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if miss := certify.Mismatches(ex); len(miss) > 0 {
				t.Errorf("%s against %s: not reproduced: %v (play error: %v)", in.File, in.Scenario.Target, miss, ex.Err)
			}
			ref, err := certify.Replay(ctx, member(t, "reference", dir), in.Scenario, certify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range ref.Result.Checks {
				if c.Verdict == checker.Failed || c.Verdict == checker.Unknown {
					t.Errorf("reference on %s: %s %s: %+v %s", in.File, c.ID, c.Verdict, c.Violations, c.Note)
				}
			}
		})
	}
}
