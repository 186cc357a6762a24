package zoo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// timeInGatewayKey claims keys and recovers them like the reference, but
// the Idempotency-Key it sends to the gateway is not the request id it
// recorded: it is derived, at each attempt, from the tenant, the order,
// the amount, the currency and the current time to the second. The owner's attempt
// and a re-send within the same second carry one key, and the gateway
// replays; a re-send a second later (a retry that takes over a key left
// unresolved, the sweeper) is a new payment to the gateway. The client
// sees one answer per key: only the ledger shows the second charge.
//
// Incident (flexprice/flexprice#2488; also #1400): the payment service
// minted its idempotency key from the invoice, the amount, the currency
// and time.Now() at second precision, so a retry of a payment whose
// answer was lost charged the card again (M1, found by crash-window).
var timeInGatewayKey = Variant{
	Name: "time-in-gateway-key",
	Bug:  "the gateway Idempotency-Key is derived from the payment (tenant, order, amount, currency) and the current second, so a re-send a second later is a new payment",
	New: hooked(func(s *reference.Server) reference.Hooks {
		return reference.Hooks{GatewayKey: func(j reference.Job) string {
			return timeKey(j, s.Config().Now())
		}}
	}),
}

// timeKey is the gateway key of an attempt made for j at now.
func timeKey(j reference.Job, now time.Time) string {
	p := j.Params
	sum := sha256.Sum256(fmt.Appendf(nil, "payment\x00%s\x00%s\x00%d\x00%s\x00%s",
		j.Tenant, p.OrderID, p.Amount, p.Currency, now.UTC().Format(time.RFC3339)))
	return "pay_" + hex.EncodeToString(sum[:16])
}
