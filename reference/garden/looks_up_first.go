package garden

import (
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/zoo"
)

// looksUpFirst is the reference with Checkout.com's rule kept on every
// provider: before it re-sends a payment whose answer it never heard (a
// retry or the sweeper taking over an unresolved key), it looks the
// payment up by its order (Stripe's search by metadata, Checkout.com's
// GET /payments?reference=) and re-sends only when none was made. On
// Adyen, whose Checkout API has no lookup, the re-send under the same key
// is the lookup: Adyen keeps the key's first result. It is correct on
// every profile; on none (a provider without idempotency) it is the only
// recovery that could be, though crash safety is not judged there.
var looksUpFirst = zoo.Variant{
	Name: "looks-up-first",
	Bug:  "none: looks every re-send's payment up by its order before re-sending it, on every provider",
	New: zoo.Hooked(func(*reference.Server) reference.Hooks {
		return reference.Hooks{LooksUpFirst: func() bool { return true }}
	}),
}
