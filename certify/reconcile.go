package certify

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/ledger"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/target"
)

// reconcileTimeout bounds the reconciliation at the run's end (a barrier
// on the ledger feed).
const reconcileTimeout = 30 * time.Second

// reconcile holds every charge the gateway made against every example played
// so far and judges again each example for which the gateway charged after
// it was judged (a sweeper, a late recovery): M1 holds per order across
// the whole run, not only while the example's requests were in flight.
// The new judgement joins the example's family; a failing one becomes the
// family's counterexample if it had none (it cannot be shrunk: nothing
// the client sent made that charge).
func (c *certification) reconcile(ctx context.Context) (ledger.Reconciliation, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reconcileTimeout)
	defer cancel()
	rc, err := c.runner.Ledger().Reconcile(ctx)
	if err != nil {
		return rc, fmt.Errorf("reconcile the ledger: %w", err)
	}
	for _, late := range rc.Rejudge {
		if fr := c.byName[late.History.Family]; fr != nil {
			fr.agg.addLate(late)
		}
	}
	for _, fr := range c.families {
		// Found after the family ended (by the watch, or only now, when
		// the ledger was read at the end): the family's first failure is
		// this late, not "none", and its counterexample if it had none.
		if late := fr.agg.lateFailure(); late != nil && fr.fail == nil {
			fr.setFailure(late)
		}
		if fr.FirstFailure == 0 {
			fr.FirstFailure = reports.Duration(fr.agg.firstFailure())
		}
	}
	return rc, nil
}

// watchLate judges again, while the families run, every example the
// gateway charges for after it was judged (ledger.Ledger.WatchLate):
// a late double charge is a failure when it happens, counted in its
// family's progress and first-failure time, not only at the run's end.
// stop ends the watch.
func (c *certification) watchLate(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.runner.Ledger().WatchLate(ctx, func(l ledger.Late) {
			fr := c.byName[l.History.Family]
			if fr == nil {
				return
			}
			fr.agg.addLate(l)
			if c.opts.Progress != nil {
				fr.agg.progress(false, func(n, v int) {
					c.opts.Progress(Progress{Family: fr.Name, Examples: n, Violations: v, Elapsed: time.Since(fr.agg.start), Budget: c.deadline.Sub(fr.agg.start)})
				})
			}
		})
	}()
	return func() { cancel(); <-done }
}

// account is the run's reconciliation (every charge of the run):
// late charges are judged with their examples again, and every succeeded
// charge must belong to an order some example sent. Money the
// harness cannot attribute (no order where the run traces money, an order nobody sent)
// is FAILED with the charge named.
func (c *certification) account(ctx context.Context) (checker.Result, error) {
	rc, err := c.reconcile(ctx)
	if err != nil {
		return checker.Result{}, err
	}
	return accounting(rc), nil
}

// accounting judges the unattributed money of a reconciliation with the
// checker's A1 rule.
func accounting(rc ledger.Reconciliation) checker.Result {
	c := checker.Accounting(&history.History{Family: "run", Charges: rc.Unattributed, Complete: true})
	c.Exercised = c.Exercised || rc.Checked > 0
	c.Note = fmt.Sprintf("held %d ledger entries against every example's orders; %s", rc.Checked, c.Note)
	if n := len(rc.Unjudged); n > 0 {
		// Money moved for an order whose example the run had let go of:
		// no history is left to judge it against, so it is neither a
		// pass nor a failure.
		c.Verdict = checker.Worst(c.Verdict, checker.Unknown)
		ids := make([]string, 0, min(n, 3))
		for _, ch := range rc.Unjudged[:min(n, 3)] {
			ids = append(ids, fmt.Sprintf("%s (order %s)", ch.ID, ch.Order))
		}
		c.Note += fmt.Sprintf("; %d charges came for orders whose example had been judged more than %s before and let go, and were not judged: %s", n, rc.Retain, strings.Join(ids, ", "))
	}
	return checker.Result{Verdict: c.Verdict, Level: "L0", Checks: []checker.CheckResult{c}}
}

// retainOf is how long the run keeps a judged example's history to
// judge it again with a late charge: long past the recovery window in
// which a correct server's sweeper or retry moves money, and long enough
// that a default run lets go of nothing.
func retainOf(recovery time.Duration) time.Duration {
	return max(2*time.Minute, 4*recovery)
}

// settleTime is how long a run waits after its last example before the
// final accounting: one recovery window (at most maxSettle), in which a
// sweeper or an outbox that charges late still shows.
func settleTime(tg *target.Target) time.Duration {
	return min(tg.Policy.RecoveryWindow, maxSettle)
}

const maxSettle = 30 * time.Second

// settle lets the settle time pass, or what is left of it before
// deadline (zero: no bound), unless ctx ends: late charges are the
// subject of the wait, not a synchronisation.
func settle(ctx context.Context, tg *target.Target, deadline time.Time) {
	wait := settleTime(tg)
	if !deadline.IsZero() {
		wait = min(wait, time.Until(deadline))
	}
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
