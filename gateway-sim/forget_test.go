package gatewaysim_test

import (
	"net/http"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// TestForgetAfter_OldChargesAndEvents: with a retention, a charge
// and its events are forgotten once a newer one comes more than the
// retention later (a soak's gateway does not grow with its length);
// without one, everything is kept.
func TestForgetAfter_OldChargesAndEvents(t *testing.T) {
	for _, retain := range []time.Duration{0, time.Minute} {
		clock := gatewaysim.NewManualClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
		withSim(t, gatewaysim.Config{Now: clock.Now}, func(e *env) {
			e.sim.ForgetAfter(retain)
			old := e.charge("key-old", "ord_old", 1000).chargeID()
			clock.Advance(2 * time.Minute)
			e.charge("key-new", "ord_new", 1000)
			kept := retain == 0
			if got := e.request(http.MethodGet, "/v1/charges/"+old, apiKey, "", "").status; (got == http.StatusOK) != kept {
				t.Errorf("retain %s: GET the old charge: %d", retain, got)
			}
			if n, want := len(e.sim.Ledger()), map[bool]int{true: 2, false: 1}[kept]; n != want {
				t.Errorf("retain %s: the ledger holds %d charges, want %d", retain, n, want)
			}
			oldEvents := 0
			for _, ev := range e.sim.Events() {
				if ev.OrderID == "ord_old" {
					oldEvents++
				}
			}
			if (oldEvents > 0) != kept {
				t.Errorf("retain %s: %d events of the old order kept", retain, oldEvents)
			}
		})
	}
}
