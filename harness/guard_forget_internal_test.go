package harness

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// TestGuardedController_ForwardsForgetAfter: under the guard the ledger
// still reaches an in-process gateway's retention (a wrapper that drops
// it let a soak's gateway keep every charge and event).
func TestGuardedController_ForwardsForgetAfter(t *testing.T) {
	clock := gatewaysim.NewManualClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	sim := gatewaysim.New(gatewaysim.Config{Now: clock.Now})
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(func() { srv.Close(); sim.Close() })
	var ctl gatewaysim.Controller = &guardedController{Controller: gatewaysim.Local(sim)}
	f, ok := ctl.(gatewaysim.Forgetter)
	if !ok {
		t.Fatal("the guarded controller is no Forgetter")
	}
	f.ForgetAfter(time.Minute)
	charge := func(order string) {
		form := url.Values{"amount": {"1250"}, "currency": {"usd"}, "source": {"tok_visa"}, "metadata[order_id]": {order}}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/charges", strings.NewReader(form.Encode()))
		req.Header.Set("Authorization", "Bearer sk_test_a")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	charge("ord_old")
	clock.Advance(2 * time.Minute)
	charge("ord_new")
	if got := sim.Ledger(); len(got) != 1 || got[0].OrderID != "ord_new" {
		t.Errorf("the gateway keeps %d charges, want only the new one", len(got))
	}
}
