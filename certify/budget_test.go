package certify_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/target"
)

// TestRun_BudgetFromReady: a set-up that a loaded machine made slow eats
// into the command line's budget, not into the self-validation's
// (Options.BudgetFromReady), whose families get their whole budget of
// examples once the environment is ready.
func TestRun_BudgetFromReady(t *testing.T) {
	dir := binDir(t)
	// The set-up takes the whole budget and more when it counts: a quick
	// real set-up then left room for an example, which ran past the
	// budget's end (1.7s played on a quiet machine).
	const budget = 5 * time.Second
	const slow = budget
	// The environment is ready slow after the real one is: a loaded
	// machine's PostgreSQL and replicas, on a quiet one.
	launch := func(ctx context.Context, tg *target.Target, o harness.Options) (harness.Env, error) {
		env, err := process.Launch(ctx, tg, o)
		if err == nil {
			select {
			case <-time.After(slow):
			case <-ctx.Done():
			}
		}
		return env, err
	}
	for _, fromReady := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		rep, err := certify.Run(ctx, member(t, "reference", dir), certify.Options{
			Families: families.MustSelect("concurrent-duplicates"), Budget: budget, Launch: launch, BudgetFromReady: fromReady,
		})
		cancel()
		if err != nil {
			t.Fatalf("from ready %v: %v", fromReady, err)
		}
		played := time.Duration(rep.Families[0].Duration)
		if fromReady && played < budget-time.Second {
			t.Errorf("from ready: the family played %s of a %s budget after a set-up of more than %s; want the whole budget", played, budget, slow)
		}
		if !fromReady && played > time.Second {
			t.Errorf("set-up counted: the family played %s of a %s budget after a set-up of more than %s; want at most 1s (no example fits)", played, budget, slow)
		}
	}
}
