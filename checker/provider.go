package checker

import (
	"fmt"
	"time"
)

// NoProviderIdempotency is why crash safety (L4) is not judged against a
// gateway without idempotency (History.Gateway.NoIdempotency): after a
// crash a server cannot learn whether its charge was made, except by
// asking the provider under the same key, so no server can be crash-safe
// there, and a FAILED would blame the server for the provider.
const NoProviderIdempotency = "the gateway kept no idempotency keys (a provider without idempotency): no server can recover a charge a crash interrupted without an idempotent provider, so crash safety is not judged"

// providerUnjudged is L4's reason for not being judged at all: some
// history was recorded against a gateway without idempotency.
func providerUnjudged(c Coverage) string {
	if c.NoGatewayIdempotency > 0 {
		return NoProviderIdempotency
	}
	return ""
}

// providerPart explains, for a double charge whose two charges carry one
// gateway key, what the provider's idempotency did: with a gateway that
// keeps every result, it had forgotten the key (such a gateway charges a
// key twice no other way), so until then only the provider held the
// order inside the provider's lifetime; with one that keeps only 2xx
// results (Checkout.com), the first attempt's answer was not a 2xx and the
// re-send paid again; with a gateway without idempotency, nothing but the
// server's own claim could have. "" when the
// keys differ or the history does not say how the gateway kept keys.
func (ix *index) providerPart(d double) string {
	key := d.first.IdempotencyKey
	if key == "" || key != d.second.IdempotencyKey {
		return ""
	}
	g := ix.h.Gateway
	switch {
	case g.NoIdempotency:
		return fmt.Sprintf("; both charges carry gateway key %q, which the gateway ignored (a provider without idempotency): only a claim of the server's own could have kept the order to one charge", key)
	case g.KeepsOnlySuccess && (g.KeyTTL == 0 || d.second.At < d.first.At+g.KeyTTL):
		return fmt.Sprintf("; both charges carry gateway key %q, which the provider (%s) still held: it keeps a key's result only when it answered 2xx, and after a 4xx or 5xx (an outage, or a 5xx after the money moved) the same key pays again: before re-sending, a server must learn whether the first attempt paid (the payments of the order's reference, or a GET of the payment)",
			key, g.Provider)
	case g.KeyTTL > 0 && g.KeepsStruck:
		return fmt.Sprintf("; both charges carry gateway key %q: the provider forgot it (%s; by %v for a key answered at once) and charged it again: only the provider's idempotency had held the order to one charge, and only inside the provider's lifetime, not the promise the server made",
			key, ix.keyLifetimeText(), d.first.At+g.KeyTTL)
	case g.KeyTTL > 0:
		return fmt.Sprintf("; both charges carry gateway key %q: the provider forgot it by %v at the latest (%s) and charged it again: only the provider's idempotency had held the order to one charge, and only inside the provider's lifetime, not the promise the server made",
			key, d.first.At+g.KeyTTL, ix.keyLifetimeText())
	}
	return ""
}

// keyLifetimeText says how long the gateway kept keys and why: in a
// history that kept the keys in recovery on their own clock
// (Gateway.KeepsStruck), an answered key for KeyTTL and a key in recovery
// until its recovery was over; before, every key for KeyTTL, never less than a recovery
// floor.
func (ix *index) keyLifetimeText() string {
	g := ix.h.Gateway
	text := fmt.Sprintf("the gateway keeps keys %s in this run", g.KeyTTL)
	if g.KeepsStruck {
		text = fmt.Sprintf("the gateway keeps an answered key %s from its first request in this run, and the key of a payment in recovery (a request answered 5xx, timed out or reset) until its recovery is over", g.KeyTTL)
	}
	pr := ix.pol.Production
	switch {
	case pr.ProviderShare() >= 1:
		return text
	case g.KeepsStruck:
		return fmt.Sprintf("%s: the provider's %s of the declared %s production promise, as a share of the test-mode promise",
			text, human(pr.ProviderKeyLifetime), human(pr.Promise()))
	}
	return fmt.Sprintf("%s: the provider's %s of the declared %s production promise, as a share of the test-mode promise, never less than the recovery floor",
		text, human(pr.ProviderKeyLifetime), human(pr.Promise()))
}

// gatewayMemoryNote is G1's note on how the gateway kept keys when that
// was less than the promise: the replays it counted held only so long.
func (ix *index) gatewayMemoryNote() string {
	g := ix.h.Gateway
	switch {
	case g.NoIdempotency:
		return "the gateway kept no idempotency keys (a provider without idempotency)"
	case g.KeyTTL > 0 && ix.promise > 0 && g.KeyTTL < ix.promise:
		return ix.keyLifetimeText() + ": a server that leans on its replays is judged on the late retries past that"
	}
	return ""
}

// human renders a production duration as people write it: 720h as
// "30 days", 24h as "24h".
func human(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d > day && d%day == 0:
		return fmt.Sprintf("%d days", d/day)
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}
