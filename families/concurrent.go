package families

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

func init() {
	register(Family{Name: "concurrent-duplicates", Level: "L2", Rank: 10, Gen: genConcurrent, WaitScale: latencyScale,
		Doc: "duplicates in flight together, across replicas, with gateway latency up to and beyond max_wait; some payments declined"})
}

// latencyScale keeps more examples in flight the longer the gateway
// latency they draw (up to MaxGatewayLatency, 1.5 × max_wait): an example
// spends its time waiting on the gateway, its duplicates held by the
// server at no cost. One more per 3s of max_wait: a 10s max_wait played
// 15 examples in a 50s run with the others' parallelism (the family's
// was measured at 1s), and a scale in proportion to max_wait (32 in
// flight) kept so many slow requests in flight that every replica
// relaunch and crash wave, which wait for them to drain, held the gate
// past the budget.
func latencyScale(tg *target.Target) int {
	return 1 + int(tg.Policy.MaxWait/(3*time.Second))
}

func genConcurrent(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario {
	var b builder
	latency := drawLatency(t, tg.Policy.MaxWait)
	orders := rapid.IntRange(1, 3).Draw(t, "orders")
	var declined []string
	for o := 0; o < orders; o++ {
		order, key := fmt.Sprintf("o%d", o), fmt.Sprintf("k%d", o)
		// The gateway is slow for this example's orders only, so that
		// other examples run beside it untouched.
		b.fault(scenarios.Fault{ID: "slow_" + order, Kind: "gateway:slow", Order: order, Params: map[string]string{"latency": latency.String()}})
		if drawDecline(t) {
			b.fault(declineFault(order))
			declined = append(declined, order)
		}
		tenant := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant")
		amount := drawAmount(t)
		dups := rapid.IntRange(2, 6).Draw(t, "duplicates")
		for d := 0; d < dups; d++ {
			replica := rapid.IntRange(0, replicas-1).Draw(t, "replica")
			b.send(scenarios.Send{ID: fmt.Sprintf("%s_%d", order, d), Client: d, Replica: replica, Tenant: tenant, Key: key, Order: order, Amount: amount, Async: true, Purpose: "duplicate"})
		}
	}
	b.waitAll()
	for o := 0; o < orders; o++ {
		b.heal(fmt.Sprintf("slow_o%d", o))
	}
	for _, order := range declined {
		b.heal("decline_" + order)
	}
	// A sequential retry after completion checks the stored answer (a
	// stored decline too, now that the gateway would charge); drawn, so
	// that shrinking can drop it when the duplicates alone fail.
	if rapid.Bool().Draw(t, "retry_after_completion") {
		for o := 0; o < orders; o++ {
			b.send(scenarios.Send{ID: fmt.Sprintf("o%d_after", o), Client: 0, Replica: -1, Tenant: tenantOf(b.steps, fmt.Sprintf("o%d", o)), Key: fmt.Sprintf("k%d", o), Order: fmt.Sprintf("o%d", o), Amount: amountOf(b.steps, fmt.Sprintf("o%d", o)), Purpose: "retry-after-completion"})
		}
	}
	return b.scenario("concurrent-duplicates")
}

// drawLatency draws the gateway's latency for concurrent duplicates
// across the whole range a duplicate may be held, (0, max_wait], and
// beyond it: a server that gives up waiting early and charges itself is
// caught only when the owner's gateway call outlasts that wait. Drawn in steps of a twentieth of max_wait, from 1/20 to
// 30/20, so shrinking moves toward the short latencies.
func drawLatency(t *rapid.T, maxWait time.Duration) time.Duration {
	twentieths := rapid.IntRange(1, latencySteps).Draw(t, "gateway_latency_twentieths_of_max_wait")
	return max(maxWait*time.Duration(twentieths)/20, time.Millisecond).Round(time.Millisecond)
}

// latencySteps makes drawLatency reach 1.5 × max_wait.
const latencySteps = 30

// MaxGatewayLatency is the longest gateway latency concurrent-duplicates
// draws for a target. A server's own gateway timeout must be longer:
// that family runs against a gateway with idempotency off, where a server
// that timed out and re-sent its request would be charged twice.
func MaxGatewayLatency(tg *target.Target) time.Duration {
	return tg.Policy.MaxWait * latencySteps / 20
}
