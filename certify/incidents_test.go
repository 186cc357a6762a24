package certify_test

import (
	"context"
	"slices"
	"strings"
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
			// Each replay has its own environment and mostly waits (TTLs,
			// recovery windows): two at a time (go test's -parallel, the
			// cores) halve the table's wall time without contending.
			t.Parallel()
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

// An incident whose family cannot judge the target is not played: the
// crash-after-charge wave needs a recovery longer than exact-ttl's
// one-second promise, so certify never draws it against exact-ttl, and a
// replay says so (UNKNOWN, naming the policy value) instead of judging
// the recovery past the promise (it was FAILED M1 before).
func TestReplay_FamilyThatCannotJudgeTheTargetIsUnknown(t *testing.T) {
	incs, err := scenarios.Incidents()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(incs, func(in scenarios.Incident) bool { return in.File == "crash-after-charge.yaml" })
	if i < 0 {
		t.Fatal("crash-after-charge.yaml is not in the regression table")
	}
	ex, err := certify.Replay(t.Context(), member(t, "exact-ttl", binDir(t)), incs[i].Scenario, certify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Result.Verdict != checker.Unknown || len(ex.History.Ops) != 0 {
		t.Fatalf("verdict %s after %d requests, want UNKNOWN before any", ex.Result.Verdict, len(ex.History.Ops))
	}
	if c, _ := ex.Result.Find("M6"); !strings.Contains(c.Note, "policy.retry_window") {
		t.Errorf("the note does not name the policy value: %q", c.Note)
	}
}
