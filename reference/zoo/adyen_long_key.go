package zoo

import (
	"encoding/hex"

	"github.com/idemcheck/idemcheck/reference"
)

// adyenLongKey claims keys, records its intent and recovers exactly as
// the reference does, but the Idempotency-Key it sends to the provider is
// a readable composite, tenant:key-hash:request-id (134 characters), not
// the recorded request id alone. Stripe takes keys of up to 255
// characters and Checkout.com documents no limit, so there it is the same
// key on every attempt and recovery replays. Adyen takes at most 64 and
// refuses a longer key (422): the integration was made to pass by sending
// no key when the composite does not fit the provider's limit, rather
// than a shorter one (a digest). On Adyen every payment then goes without
// idempotency, and a recovery that re-sends a payment whose answer was
// lost (a 5xx after the money moved) is a second payment: M1, found by
// crash-window.
//
// Incident: an idempotency key longer than the provider documents
// (kessai's Worldline integration: a 43-character key against a limit of
// 40, "two of [reject, truncate, ignore] mean the protection does not
// exist"); Adyen's "API idempotency": the key is "a maximum of 64
// characters".
var adyenLongKey = Variant{
	Name: "adyen-long-key",
	Bug:  "derives a 134-character gateway key (tenant:key-hash:request-id) and sends none where the provider takes fewer characters (Adyen: 64)",
	New: hooked(func(s *reference.Server) reference.Hooks {
		limit := gatewayKeyLimits[s.Config().Gateway.Provider]
		return reference.Hooks{GatewayKey: func(j reference.Job) string {
			if k := compositeKey(j); len(k) <= limit {
				return k
			}
			return "" // does not fit: sent without a key (Hooks.GatewayKey)
		}}
	}),
}

// gatewayKeyLimits are the longest keys the providers take, as their
// documents give them (Checkout.com documents none).
var gatewayKeyLimits = map[reference.GatewayProvider]int{
	reference.StripeProvider:   255,
	reference.CheckoutProvider: 1 << 20,
	reference.AdyenProvider:    64,
}

// compositeKey is the gateway key adyen-long-key derives for j: the same
// on every attempt of one claim.
func compositeKey(j reference.Job) string {
	return j.Tenant + ":" + hex.EncodeToString(j.KeyHash) + ":" + j.RequestID
}
