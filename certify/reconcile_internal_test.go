package certify

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/scenarios"
)

// TestReconcile_LateFailureIsTheFamilysFirstFailure: a family whose only
// failure is found when the run reads the ledger at its end (a charge
// made after the example was judged, as sweeper-recharges' outbox makes)
// reports that moment as its first failure, not none (the zoo table
// counted such seeds as failing at 0s).
func TestReconcile_LateFailureIsTheFamilysFirstFailure(t *testing.T) {
	tg := harnesstest.Target(t, false, nil)
	env, tg := harnesstest.StartPrepared(t, tg, harness.Options{Replicas: 1})
	r := &scenarios.Runner{Env: env, Target: tg, RunID: "late"}
	defer r.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sc := scenarios.Scenario{Name: "one", Family: "key-reuse", Steps: []scenarios.Step{{Send: &scenarios.Send{Key: "k", Order: "o", Tenant: -1}}}}
	h, err := r.Run(ctx, sc)
	if err != nil || len(h.Charges) != 1 {
		t.Fatalf("run: %v, charges %+v", err, h.Charges)
	}
	fr := &familyRun{agg: &aggregate{start: time.Now()}, FamilyResult: reports.FamilyResult{Name: "key-reuse"}}
	if fr.agg.add(scenarios.Example{Scenario: sc, History: h, Result: checker.Check(h)}); fr.agg.failures() != 0 {
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

	if _, err := reconcile(ctx, r, []*familyRun{fr}); err != nil {
		t.Fatal(err)
	}
	if fr.agg.failures() != 1 || fr.FirstFailure <= 0 {
		t.Errorf("after reconciliation: %d failing examples, first failure %v; want the late double charge to fail, at the time it was found",
			fr.agg.failures(), time.Duration(fr.FirstFailure))
	}
}
