package zoo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/idemcheck/idemcheck/reference"
)

// lookAlikeKey claims keys, records intent and recovers like the
// reference, but the Idempotency-Key it sends to the gateway says what the
// payment is, not which order it pays: a hash of the tenant (the
// customer), the amount and the currency. Every attempt for one order
// carries one key, so retries and recovery stay deduplicated; a second
// order that looks the same (the customer pays the same price again, under
// a key of its own) is sent under the first order's gateway key. Where the
// two requests' parameters are equal the gateway replays the first charge
// and the second order is told it paid with no money moved for it (M2);
// the reference names the order (and its request id) in the charge's
// metadata, so the parameters differ and the gateway refuses the reused
// key: the second order's answer stays indeterminate and every retry
// and the sweeper meet the same refusal (M6).
//
// Incident (mozilla/fxa PR #14700): the subscription's idempotency key was
// a hash of the customer id, the price id and the card's fingerprint, so
// subscribing again after a cancellation was taken by Stripe for the old
// request.
var lookAlikeKey = Variant{
	Name: "look-alike-key",
	Bug:  "the gateway Idempotency-Key is derived from what the payment is (tenant, amount, currency), not which order it pays",
	New: hooked(func(*reference.Server) reference.Hooks {
		return reference.Hooks{GatewayKey: paymentShapeKey}
	}),
}

// paymentShapeKey is the gateway key of j: the same for every payment of
// one tenant with one amount and currency.
func paymentShapeKey(j reference.Job) string {
	p := j.Params
	sum := sha256.Sum256(fmt.Appendf(nil, "payment\x00%s\x00%d\x00%s", j.Tenant, p.Amount, p.Currency))
	return "pay_" + hex.EncodeToString(sum[:16])
}
