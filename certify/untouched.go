package certify

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// untouched judges the run's T1 (harness untouched) over what its guard
// found: every touch FAILED, with what, when and by which link or
// replica. The other requests to the provider's address that were not its
// API (nor a control API) are named in the note, not judged.
func untouched(ctx context.Context, g *harness.Guard) checker.Result {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reconcileTimeout)
	defer cancel()
	touches, proofs, other := g.Evidence(ctx)
	c := checker.Untouched(&history.History{Family: "run", Touches: touches, Proofs: proofs, Complete: true})
	if len(other) > 0 {
		var reqs []string
		for _, r := range slices.Sorted(maps.Keys(other)) {
			reqs = append(reqs, fmt.Sprintf("%s ×%d", r, other[r]))
		}
		c.Note += fmt.Sprintf("; requests to the provider's address that are not its API (answered with its 404): %s", strings.Join(reqs, ", "))
	}
	return checker.Result{Verdict: c.Verdict, Level: "L0", Checks: []checker.CheckResult{c}}
}
