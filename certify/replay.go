package certify

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/runner"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/search"
	"github.com/idemcheck/idemcheck/target"
)

// Replay plays one incident scenario exactly once against tg and judges
// it. The scenario is data: the same file replays the same timeline.
//
// An incident of a family that cannot judge tg (Family.Fits: a crash
// wave whose recovery outlasts tg's promise) is not played: certify would
// not draw it against tg, and a replay judged against a promise the
// scenario does not fit would blame tg for the harness's choice. Its
// result is UNKNOWN, naming the policy value that keeps the family out.
func Replay(ctx context.Context, tg *target.Target, sc *scenarios.Scenario, opts Options) (*search.Example, error) {
	opts.defaults()
	if ex := unfit(tg, sc); ex != nil {
		return ex, nil
	}
	env, closeEnv, err := environment(ctx, tg, opts)
	if err != nil {
		return nil, err
	}
	defer closeEnv()
	// The incident's orders are traced as certify traced them.
	if tg, _, err = firstContact(ctx, tg, env, 0); err != nil {
		return nil, err
	}
	runner := runner.New(runner.Config{Env: env, Target: tg, Log: opts.Log, RunID: runID(), StopEarly: checker.MovedMoneyWrongly,
		Gateway: GatewayRecord(GatewayConfig(tg, opts.NoGatewayIdempotency))})
	defer runner.Close()
	start := time.Now()
	h, err := runner.Run(ctx, *sc)
	if err == nil && ctx.Err() == nil {
		// A charge made after the example was judged (a sweeper, an
		// outbox) is part of the incident: wait one recovery window for
		// it and judge the example with every charge for its orders.
		settle(ctx, tg, time.Time{})
		rctx, cancel := context.WithTimeout(ctx, reconcileTimeout)
		rc, rerr := runner.Ledger().Reconcile(rctx)
		cancel()
		if rerr != nil {
			err = rerr
		}
		for _, late := range rc.Rejudge {
			h = late.History
		}
	}
	return &search.Example{Scenario: *sc, History: h, Result: checker.Check(h), Err: err, Took: time.Since(start)}, nil
}

// unfit is the UNKNOWN example of an incident whose family cannot judge
// tg, or nil when it can (or names no family).
func unfit(tg *target.Target, sc *scenarios.Scenario) *search.Example {
	fam, err := families.FamilyByName(sc.Family)
	if err != nil || fam.Fits == nil {
		return nil
	}
	why := fam.Fits(tg)
	if why == nil {
		return nil
	}
	note := fmt.Sprintf("not played: %s cannot judge %s: %s", fam.Name, tg.Name, strings.TrimPrefix(why.Error(), ": "))
	return &search.Example{Scenario: *sc, History: &history.History{Target: tg.Name}, Result: checker.Undecided(fam.DecidedBy(), fam.Level, note)}
}

// Mismatches compares an example's verdicts with the scenario's Expect
// and lists every expectation that did not hold.
func Mismatches(ex *search.Example) []string {
	var out []string
	for _, e := range ex.Scenario.Expect {
		c, ok := ex.Result.Find(e.Check)
		got := "absent"
		if ok {
			got = string(c.Verdict)
		}
		if got != e.Verdict {
			out = append(out, fmt.Sprintf("%s: expected %s, got %s", e.Check, e.Verdict, got))
		}
	}
	return out
}
