package checker

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/crashwave"
	"github.com/idemcheck/idemcheck/history"
)

// g1 judges G1: the gateway's idempotency must not be what keeps an order
// from a second charge. A gateway replay for an order means the server sent
// a charge it had sent before; after a crash that is recovery (re-sending
// its own request id is how the protocol lets a server learn what happened),
// and so it is after a store outage (an owner that cannot reach its store
// cannot renew its lease, and a correct server takes the key over and
// re-sends the recorded request); with neither before it, the server sent
// the charge twice on its own (a missing lock, its own timeout). The money
// stayed right, so this is INFORMATIONAL: "a pass that only the gateway
// held". Exercised whenever the gateway replayed.
func (ix *index) g1() CheckResult {
	c := newCheck("G1")
	recovered := 0
	for _, r := range ix.h.GatewayReplays {
		c.Exercised = true
		if ix.crashedBefore(r.Order, r.At) || ix.storeLostBefore(r.At) {
			recovered++
			continue
		}
		c.flag(Informational, Violation{Order: r.Order, Charges: []string{r.ChargeID}, Explanation: fmt.Sprintf(
			"the gateway replayed %s for order %s at %s (its key %q): the server sent that charge again with no crash or store outage to recover from, and only the gateway's idempotency kept the order from a second charge", r.ChargeID, r.Order, r.At.Round(time.Millisecond), r.IdempotencyKey)})
	}
	c.Note = notes(fmt.Sprintf("judged %d gateway replays, %d of them recoveries after a crash or a store outage", len(ix.h.GatewayReplays), recovered), ix.gatewayMemoryNote())
	return c
}

// crashedBefore says whether a crash-class fault fired before at that
// could have struck order: one of its payment, or one reaching beyond a
// payment (a process, a kill inside another order's hold); the
// history's own or another example's that it lived through (a replica
// killed by another example's wave takes this example's in-flight keys
// down with it, and their recovery re-sends them).
func (ix *index) crashedBefore(order string, at time.Duration) bool {
	for _, f := range crashes(ix.faults) {
		if f.Fired <= at && (f.ScopeOf() != history.Payment || f.Order == order) {
			return true
		}
	}
	return false
}

// storeLostBefore says whether a fault cut a replica off its store or
// restarted the store (crashwave.StoreTarget) before at, and healed no more
// than a recovery window (and the convergence slack) before it: the
// history's own or one it lived through, since a store outage reaches
// every owner. A re-send later than that is the server's own doing.
func (ix *index) storeLostBefore(at time.Duration) bool {
	window := ix.h.Policy.RecoveryWindow + ix.h.Policy.ConvergeSlack()
	for _, f := range ix.faults {
		if crashwave.StoreTarget(f.Target) && f.Inject <= at && (!f.Healed || at <= f.Heal+window) {
			return true
		}
	}
	return false
}
