package families

import (
	"time"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// lookAlikeWorkers caps the family's examples in flight. Its examples
// are two payments and their retries, mostly waiting out a gap or, like
// every family's, at the gate while another family's crash wave holds the
// environment; so it waits (Family.Waits), with eight in flight: enough
// pairs to matter in a default run without taking CPU from the families
// that crash servers.
const lookAlikeWorkers = 8

// lookAlikeGapSteps draws the gap between a pair's two payments in
// quarters of a second, up to 2s: the same customer paying again seconds
// later (a second order, a resubscription), never the same payment.
const lookAlikeGapSteps = 8

func init() {
	register(Family{Name: "look-alike", Level: "L1", Rank: 55, Gen: genLookAlike, Waits: true, Workers: lookAlikeWorkers, Caveat: lookAlikeCaveat,
		Doc: "two orders of one tenant with the same amount and currency under different keys, concurrent or seconds apart: both must be charged, once each"})
}

// genLookAlike draws a look-alike pair: two different orders from one
// tenant, the same amount and currency, each under its own key, sent
// together or a drawn gap apart. Nothing but the order (and the key) tells
// them apart, so a server that names a payment at the gateway by what it
// is (tenant, amount, currency) instead of which order it pays sends the
// second under the first's gateway key: the gateway replays the first
// charge (equal parameters) or refuses the reused key (the order named in
// the parameters), and one order is never charged. The runner retries a
// key left indeterminate at the example's end, so an order left stuck
// shows as M6; a drawn retry of each after both answers checks what its
// key stored. No send converges itself: a converging send keeps
// retrying until the environment has been quiet for a recovery window,
// and another family's crash waves would hold every pair that long.
func genLookAlike(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario {
	var b builder
	tenant := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant")
	amount := drawAmount(t)
	concurrent := rapid.Bool().Draw(t, "concurrent")
	pay := func(id, key, order string, client int, purpose string) scenarios.Send {
		return scenarios.Send{ID: id, Client: client, Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica"), Tenant: tenant,
			Key: key, Order: order, Amount: amount, Async: concurrent, Purpose: purpose}
	}
	b.send(pay("a", "ka", "oa", 0, "look-alike-first"))
	if !concurrent {
		if gap := rapid.IntRange(0, lookAlikeGapSteps).Draw(t, "gap_quarter_seconds"); gap > 0 {
			b.wait(scenarios.Wait{For: time.Duration(gap) * 250 * time.Millisecond})
		}
	}
	b.send(pay("b", "kb", "ob", 1, "look-alike-second"))
	b.waitAll()
	if rapid.Bool().Draw(t, "retry_after_completion") {
		for _, p := range []struct{ id, key, order string }{{"a_retry", "ka", "oa"}, {"b_retry", "kb", "ob"}} {
			s := pay(p.id, p.key, p.order, 2, "retry-after-completion")
			s.Async = false
			b.send(s)
		}
	}
	return b.scenario("look-alike")
}

// lookAlikeCaveat says what the family cannot show for tg: under an amount
// trace (a server that names no order at the gateway) the runner gives
// every payment an amount of its own, so the pair is two payments that no
// longer look alike.
func lookAlikeCaveat(tg *target.Target) string {
	if rule, ok := tg.Protocol.TraceRule(); ok && rule.Amount {
		return "not judged as look-alike payments: under protocol.trace: amount every payment gets an amount of its own, so each pair was played as two payments of different amounts"
	}
	return ""
}
