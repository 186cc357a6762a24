package zoo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// passthroughKey keeps no idempotency record of its own: it passes a key
// derived from the client's (tenant and key) to the payment provider as
// the provider's Idempotency-Key and lets the provider deduplicate. Every
// request goes straight to the gateway: a retry is replayed by the
// provider, a duplicate in flight is held while the provider answers 409
// (then 409 with Retry-After), and a key reused with another body is
// refused because the provider compares parameters (the body's digest
// rides in the description, standing in for a service that forwards
// every field of its request). A body the reference's own validation
// refuses (an upper-case currency) is a 400 even under a key in use: it
// has no record to tell it the key is, so the 422 of a reused key (R2) is
// NON-STRICT. With an idempotent provider that remembers
// keys for the whole promise, nothing is wrong but that the provider held
// the lock (G1).
//
// Incident: the service promises a 30-day retry window, the provider
// (Stripe) keeps keys for 24 hours; a retry on day 2 charges the customer
// again (M1, found by late-retry once the target declares its production
// TTL, policy.production.ttl). Against a provider without idempotency,
// two concurrent duplicates both charge (M1, concurrent-duplicates with
// --gateway-idempotency off).
var passthroughKey = Variant{
	Name: "passthrough-key",
	Bug:  "keeps no record of its own: passes a key derived from the client's to the provider and lets the provider deduplicate",
	New: withoutSweeper(hooked(func(s *reference.Server) reference.Hooks {
		return reference.Hooks{Charge: passthrough{s}.charge}
	})),
}

// passthrough is the flow in place of the reference's claim.
type passthrough struct{ s *reference.Server }

// inFlightPoll is how often a request re-asks the provider about a key
// another request holds in flight there.
const inFlightPoll = 50 * time.Millisecond

func (p passthrough) charge(ctx context.Context, req *reference.ChargeRequest) reference.Answer {
	ctx = context.WithoutCancel(ctx)
	cfg := p.s.Config()
	greq := reference.GatewayRequest{RequestID: providerKey(req), ChargeParams: req.Params}
	greq.Description = fmt.Sprintf("%s [request %x]", req.Params.Description, req.Fingerprint[:8])
	held := time.Now().Add(cfg.MaxWait)
	for {
		out := cfg.Gateway.Charge(ctx, greq)
		switch {
		case out.Definitive():
			res, _ := reference.ResultFor(out, req.Params)
			return reference.Answer{Result: &res}
		case out.Status == http.StatusConflict && time.Now().Before(held):
			time.Sleep(inFlightPoll) // the key is in flight at the provider
		case out.Status == http.StatusConflict:
			return p.s.Conflict()
		case out.Status == http.StatusBadRequest && out.Error != nil && out.Error.Type == "idempotency_error":
			return p.s.Mismatch() // the provider holds the key with other parameters
		default:
			return reference.UnknownOutcome(out)
		}
	}
}

// providerKey is the provider's Idempotency-Key for a request: the
// client's key, scoped to its tenant (the provider scopes keys to the
// service's one API key), hashed to fit the provider's 255 characters.
func providerKey(req *reference.ChargeRequest) string {
	sum := sha256.Sum256([]byte(req.Tenant + "\x00" + req.Key))
	return "pk_" + hex.EncodeToString(sum[:16])
}
