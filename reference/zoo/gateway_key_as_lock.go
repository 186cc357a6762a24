package zoo

import (
	"encoding/hex"

	"github.com/idemcheck/idemcheck/reference"
)

// gatewayKeyAsLock is the check-then-act flow with no lock of its own:
// it forwards the client's key (scoped to the tenant) to the gateway as
// its Idempotency-Key and counts on the gateway to turn concurrent
// duplicates into one charge. It passes as long as the gateway
// deduplicates and still remembers the key.
//
// Incident: the payment provider is switched to one without idempotency
// keys (or its key window is shorter than the retries), and two concurrent
// duplicates charge twice (M1, found by concurrent-duplicates against a
// gateway with idempotency off).
var gatewayKeyAsLock = Variant{
	Name: "gateway-key-as-lock",
	Bug:  "no lock of its own: forwards the client's key to the gateway as its Idempotency-Key and lets the gateway deduplicate",
	New: func(cfg reference.Config) (Server, error) {
		n, err := newCheckThenAct(cfg)
		if err != nil {
			return nil, err
		}
		n.requestID = func(req *reference.ChargeRequest) string {
			return req.Tenant + "-" + hex.EncodeToString(req.KeyHash)
		}
		return n, nil
	},
}
