package runner_test

import (
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/runner"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// TestRun_KeepsTheKeysOfAPaymentInRecovery: the gateway forgets an
// answered key at its lifetime (300ms here), but the keys of an example
// one of whose requests got an indeterminate answer are kept until the
// example is over. The test server passes the client's key to the
// gateway: a retry past the lifetime of a payment answered 201 is a new
// payment, of one answered 502 (the gateway charged, then failed) the
// gateway's replay.
func TestRun_KeepsTheKeysOfAPaymentInRecovery(t *testing.T) {
	tg := harnesstest.Target(t, false, nil)
	tg.Policy = target.Policy{TTL: 200 * time.Millisecond, RetryWindow: 3 * time.Second}
	env, tg := harnesstest.StartPrepared(t, tg, harness.Options{Replicas: 1, Gateway: gatewaysim.Config{IdempotencyTTL: 300 * time.Millisecond}})
	r := runner.New(runner.Config{Env: env, Target: tg, RunID: "kp"})
	t.Cleanup(r.Close)
	payment := func(struck bool) scenarios.Scenario {
		var steps []scenarios.Step
		if struck {
			steps = append(steps, scenarios.Step{Fault: &scenarios.Fault{ID: "f", Kind: "gateway:charge_then_fail", Order: "o", Params: map[string]string{"times": "1"}}})
		}
		steps = append(steps,
			scenarios.Step{Send: &scenarios.Send{ID: "first", Key: "k", Order: "o", Tenant: -1, Purpose: "first"}},
			scenarios.Step{Wait: &scenarios.Wait{TTL: 5}}, // 1s: past the gateway's 300ms
			scenarios.Step{Send: &scenarios.Send{ID: "retry", Key: "k", Order: "o", Tenant: -1, Purpose: "retry"}})
		if struck {
			steps = append(steps, scenarios.Step{Heal: "f"})
		}
		return scenarios.Scenario{Name: "keep", Family: "late-retry", Steps: steps}
	}
	for _, c := range []struct {
		name    string
		struck  bool
		charges int
	}{
		{"answered 201: forgotten at the lifetime", false, 2},
		{"answered 502 after the charge: kept, replayed", true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := playComplete(t, r, payment(c.struck))
			if len(h.Charges) != c.charges {
				t.Errorf("%d charges (ops %v), want %d", len(h.Charges), purposes(h), c.charges)
			}
		})
	}
}
