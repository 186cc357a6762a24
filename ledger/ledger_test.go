package ledger_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/ledger"
	"github.com/idemcheck/idemcheck/scenarios"
)

// charge makes the gateway charge order once, with no idempotency key.
func charge(t *testing.T, url_ string, order string) {
	t.Helper()
	form := url.Values{"amount": {"1250"}, "currency": {"usd"}, "source": {"tok_visa"}, "metadata[order_id]": {order}}
	req, _ := http.NewRequest(http.MethodPost, url_+"/v1/charges", strings.NewReader(form.Encode()))
	req.Header.Set("Authorization", "Bearer sk_test_a")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("charge %s: %v %v", order, err, resp)
	}
	resp.Body.Close()
}

// judge plays what the runner does for one example: own its order, let
// the gateway charge it, and hand the judged history to the ledger.
func judge(t *testing.T, l *ledger.Ledger, srv, order string, seed uint64) {
	t.Helper()
	l.Own(order)
	charge(t, srv, order)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Feed().Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	rec := history.NewRecorder(history.History{Family: "f", Seed: seed})
	included := map[string]bool{}
	for _, ev := range l.Feed().Order(order) {
		c, _ := ledger.ChargeOf(ev, rec)
		rec.Charge(c)
		included[c.ID] = true
	}
	l.Judged(scenarios.Scenario{Family: "f", Seed: seed}, rec, rec.Snapshot(true), included, []string{order})
}

func TestLedger_LetsGoOfAJudgedHistoryAfterRetain(t *testing.T) {
	for _, c := range []struct {
		retain                time.Duration
		wantRejudge, wantLost int
	}{
		{0, 1, 0},               // kept to the end: the late charge is judged with its example
		{time.Nanosecond, 0, 1}, // let go: the late charge is reported, not judged
	} {
		sim := gatewaysim.New(gatewaysim.Config{})
		srv := httptest.NewServer(sim.Handler())
		l := ledger.NewLedger(gatewaysim.Local(sim))
		l.SetRetain(c.retain)
		judge(t, l, srv.URL, "ord_a", 1)
		judge(t, l, srv.URL, "ord_b", 2) // judged after ord_a's retain: ord_a is let go
		charge(t, srv.URL, "ord_a")      // a sweeper charges ord_a again
		if err := l.Feed().Barrier(t.Context()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rc, err := l.Reconcile(ctx)
		cancel()
		l.Close()
		srv.Close()
		sim.Close()
		if err != nil {
			t.Fatal(err)
		}
		if kept, want := len(l.Feed().Order("ord_a")), 2-c.wantLost; kept != want {
			t.Errorf("retain %s: the feed keeps %d events of ord_a; want %d (once it is let go, only the late charge)", c.retain, kept, want)
		}
		if len(rc.Rejudge) != c.wantRejudge || len(rc.Unjudged) != c.wantLost || len(rc.Unattributed) != 0 {
			t.Errorf("retain %s: %d to judge again, %d unjudged, %d unattributed; want %d, %d, 0", c.retain, len(rc.Rejudge), len(rc.Unjudged), len(rc.Unattributed), c.wantRejudge, c.wantLost)
		}
	}
}

// TestLedger_ChargeTakenWhileItsExampleIsPlayed: a charge the ledger takes
// before its example is judged waits for the judgement; it is late when
// the example's history does not hold it, and is not offered when it
// does.
func TestLedger_ChargeTakenWhileItsExampleIsPlayed(t *testing.T) {
	for _, held := range []bool{true, false} {
		sim := gatewaysim.New(gatewaysim.Config{})
		srv := httptest.NewServer(sim.Handler())
		l := ledger.NewLedger(gatewaysim.Local(sim))
		l.Own("ord_a")
		charge(t, srv.URL, "ord_a")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if rc, err := l.Reconcile(ctx); err != nil || rc.Checked != 1 || len(rc.Rejudge)+len(rc.Unattributed) != 0 {
			t.Fatalf("before the judgement: %s, %v", rc, err)
		}
		rec := history.NewRecorder(history.History{Family: "f", Seed: 1})
		included := map[string]bool{}
		if held {
			for _, ev := range l.Feed().Order("ord_a") {
				c, _ := ledger.ChargeOf(ev, rec)
				rec.Charge(c)
				included[c.ID] = true
			}
		}
		l.Judged(scenarios.Scenario{Family: "f", Seed: 1}, rec, rec.Snapshot(true), included, []string{"ord_a"})
		rc, err := l.Reconcile(ctx)
		cancel()
		l.Close()
		srv.Close()
		sim.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 0, false: 1}[held]; len(rc.Rejudge) != want || len(rc.Unattributed) != 0 {
			t.Errorf("history holds the charge %v: %s; want %d to judge again", held, rc, want)
		}
	}
}
