package runner_test

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/ledger"
	"github.com/idemcheck/idemcheck/runner"
	"github.com/idemcheck/idemcheck/scenarios"
)

// gatewayCharge charges at the gateway directly, as a sweeper or an
// outbox of the server would: form-encoded, with the order in metadata
// when order is not "".
func gatewayCharge(t *testing.T, base, apiKey, order string) {
	t.Helper()
	form := url.Values{"amount": {"1250"}, "currency": {"usd"}}
	if order != "" {
		form.Set("metadata[order_id]", order)
	}
	req, _ := http.NewRequest("POST", base+"/v1/charges", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(apiKey, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("gateway charge: %s", resp.Status)
	}
}

// chargedOnce starts an environment with one replica and runs one
// example that charges its order once; everything stops with the test.
func chargedOnce(t *testing.T, runID string) (context.Context, *process.Env, *runner.Runner, *history.History) {
	t.Helper()
	tg := harnesstest.Target(t, false, nil)
	env, tg := harnesstest.StartPrepared(t, tg, harness.Options{Replicas: 1})
	r := runner.New(runner.Config{Env: env, Target: tg, RunID: runID})
	t.Cleanup(r.Close)
	sc := scenarios.Scenario{Name: "one", Family: "key-reuse", Steps: []scenarios.Step{{Send: &scenarios.Send{Key: "k", Order: "o", Tenant: -1}}}}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	h, err := r.Run(ctx, sc)
	if err != nil || len(h.Charges) != 1 {
		t.Fatalf("run: %v, charges %+v, ops %+v", err, h.Charges, h.Ops)
	}
	return ctx, env, r, h
}

// TestReconcile_LateAndUnattributedCharges: a charge made for an order
// after its example was judged is handed back with the example's history
// for judging again, and charges with no order or a foreign order are
// unattributed money.
func TestReconcile_LateAndUnattributedCharges(t *testing.T) {
	ctx, env, r, h := chargedOnce(t, "rc")
	order := h.Ops[0].Order

	gatewayCharge(t, env.GatewayURL(), env.GatewayAPIKey(), order)
	gatewayCharge(t, env.GatewayURL(), env.GatewayAPIKey(), "")
	gatewayCharge(t, env.GatewayURL(), env.GatewayAPIKey(), "ord_nobody")
	rc, err := r.Ledger().Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Checked != 4 || len(rc.Rejudge) != 1 || len(rc.Unattributed) != 2 {
		t.Fatalf("reconciliation %s: want 4 checked, 1 to judge again, 2 unattributed", rc)
	}
	late := rc.Rejudge[0].History
	if len(late.Charges) != 2 || late.Charges[1].Order != order || late.Charges[1].At < h.Charges[0].At {
		t.Errorf("re-judged history charges %+v: want the late charge after the first, on the example's clock", late.Charges)
	}
	if rc.Unattributed[0].Order != "" || rc.Unattributed[1].Order != "ord_nobody" {
		t.Errorf("unattributed %+v", rc.Unattributed)
	}
	if again, _ := r.Ledger().Reconcile(ctx); len(again.Rejudge) != 0 {
		t.Errorf("a late charge is handed back once, got it again: %s", again)
	}
}

// TestWatchLate_ReturnedHistoryNeverChanges: charges that arrive after an
// example was judged, while its history is being judged again and again,
// come as new histories; the history Run returned stays as it was (run
// with -race: a late charge once was appended to it and sorted in place).
func TestWatchLate_ReturnedHistoryNeverChanges(t *testing.T) {
	ctx, env, r, h := chargedOnce(t, "immutable")
	before, _ := json.Marshal(h)

	const lateCharges = 3
	lates := make(chan ledger.Late, 16)
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); r.Ledger().WatchLate(watchCtx, func(l ledger.Late) { lates <- l }) }()
	judging := make(chan struct{})
	judged := make(chan int)
	begun := make(chan struct{}) // the judging has begun before the late charges are sent
	go func() {
		n := 0
		for {
			select {
			case <-judging:
				judged <- n
				return
			default:
				checker.Check(h)
				if n++; n == 1 {
					close(begun)
				}
			}
		}
	}()
	<-begun
	for range lateCharges {
		gatewayCharge(t, env.GatewayURL(), env.GatewayAPIKey(), h.Ops[0].Order)
	}
	last := ledger.Late{History: h}
	for len(last.History.Charges) < 1+lateCharges {
		select {
		case last = <-lates:
		case <-ctx.Done():
			t.Fatalf("late charges delivered: %d of %d", len(last.History.Charges)-1, lateCharges)
		}
	}
	if _, err := r.Ledger().Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	close(judging)
	if n := <-judged; n == 0 {
		t.Error("the history was never judged while the late charges arrived")
	}
	stopWatch()
	<-watched
	if after, _ := json.Marshal(h); string(after) != string(before) {
		t.Errorf("the history Run returned changed:\nbefore %s\nafter  %s", before, after)
	}
	if last.History == h || !slices.IsSortedFunc(last.History.Charges, func(a, b history.Charge) int { return cmp.Compare(a.At, b.At) }) {
		t.Errorf("late history: want a new history with its charges by time, got %+v", last.History.Charges)
	}
}
