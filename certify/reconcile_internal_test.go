package certify

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/search"
)

// TestReconcile_LateFailureIsTheFamilysFirstFailure: a family whose only
// failure is found when the run reads the ledger at its end (a charge
// made after the example was judged, as sweeper-recharges' outbox makes)
// reports that moment as its first failure, not none.
func TestReconcile_LateFailureIsTheFamilysFirstFailure(t *testing.T) {
	ctx, c, fr := chargedBehindItsBack(t, Options{})
	if _, err := c.reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if fr.agg.failures() != 1 || fr.FirstFailure <= 0 {
		t.Errorf("after reconciliation: %d failing examples, first failure %v; want the late double charge to fail, at the time it was found",
			fr.agg.failures(), time.Duration(fr.FirstFailure))
	}
}

// TestWatchLate_FailsWhenTheChargeHappens: the same late double charge
// is a failure of its family while the run goes on, as soon as the
// ledger feed delivers it, not only at the run's end, and the end-of-run
// reconciliation does not count it again.
func TestWatchLate_FailsWhenTheChargeHappens(t *testing.T) {
	seen := make(chan Progress, 1)
	ctx, c, fr := chargedBehindItsBack(t, Options{Progress: func(p Progress) {
		if p.Violations > 0 {
			select {
			case seen <- p:
			default:
			}
		}
	}})
	stop := c.watchLate(ctx)
	select {
	case p := <-seen:
		if p.Family != "key-reuse" || p.Examples != 2 || p.Elapsed <= 0 {
			t.Errorf("progress %+v, want key-reuse's example judged again", p)
		}
	case <-ctx.Done():
		t.Fatal("the late double charge never failed while the run went on")
	}
	stop()
	rc, err := c.reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.Rejudge) != 0 || fr.agg.failures() != 1 || fr.fail == nil || fr.FirstFailure <= 0 {
		t.Errorf("after reconciliation: %d offered again, %d failing examples, counterexample %v, first failure %v; want none again, 1, the late one, its time",
			len(rc.Rejudge), fr.agg.failures(), fr.fail != nil, time.Duration(fr.FirstFailure))
	}
}

// chargedBehindItsBack plays one key-reuse example (one charge), judges
// it into a family, and then charges its order again on another key, as
// a sweeper or an outbox would after the example was judged.
func chargedBehindItsBack(t *testing.T, opts Options) (context.Context, *certification, *familyRun) {
	t.Helper()
	tg := harnesstest.Target(t, false, nil)
	env, tg := harnesstest.StartPrepared(t, tg, harness.Options{Replicas: 1})
	opts.Families, opts.Budget = families.MustSelect("key-reuse"), time.Minute
	opts.defaults()
	c := newCertification(tg, env, &reports.Report{}, time.Now(), opts)
	r, fr := c.runner, c.families[0]
	t.Cleanup(r.Close)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	sc := scenarios.Scenario{Name: "one", Family: "key-reuse", Steps: []scenarios.Step{{Send: &scenarios.Send{Key: "k", Order: "o", Tenant: -1}}}}
	h, err := r.Run(ctx, sc)
	if err != nil || len(h.Charges) != 1 {
		t.Fatalf("run: %v, charges %+v", err, h.Charges)
	}
	if fr.agg.add(search.Example{Scenario: sc, History: h, Result: checker.Check(h)}); fr.agg.failures() != 0 {
		t.Fatalf("the example failed before the late charge: %+v", fr.agg.result())
	}

	// The same order charged again behind the example's back, on another key.
	body := []byte(`{"amount":1250,"currency":"usd","order_id":"` + h.Ops[0].Order + `"}`)
	req, _ := http.NewRequest("POST", env.ReplicaURL(0)+"/v1/charges", bytes.NewReader(body))
	req.Header.Set("Idempotency-Key", "behind-its-back")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return ctx, c, fr
}
