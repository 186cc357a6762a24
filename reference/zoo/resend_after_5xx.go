package zoo

import "github.com/idemcheck/idemcheck/reference"

// resendAfter5xx claims keys and recovers them exactly as the reference
// does on Stripe: after an indeterminate gateway answer it re-sends its
// recorded request under the same gateway key and takes what comes back.
// That is correct on a provider that keeps every result once execution
// started (Stripe: the re-send replays the charge). Run against
// Checkout.com (--gateway-provider=checkout), which keeps a key's result
// only when it answered 2xx, a payment answered 5xx after the money moved
// is attempted again under the same key, and charged twice: the re-send
// had to look the payment up first (GET /payments?reference=).
//
// Incident: a Stripe integration ported to another provider keeps its
// recovery, and the provider's idempotency no longer covers it (issue 37;
// Checkout.com's "Idempotency": "If the original request returns a 4xx
// or 5xx response code, no idempotent result is saved and the payment is
// reattempted").
var resendAfter5xx = Variant{
	Name: "resend-after-5xx",
	Bug:  "recovers as on Stripe: after an indeterminate gateway answer it re-sends under the same gateway key without looking the payment up, which Checkout.com does not deduplicate after a 5xx",
	New: hooked(func(*reference.Server) reference.Hooks {
		return reference.Hooks{LooksUpFirst: func() bool { return false }}
	}),
}
