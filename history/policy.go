package history

import (
	"time"

	"github.com/idemcheck/idemcheck/crashwave"
)

// Policy is what the target declares about itself: read from the target
// file (policy:, hence the yaml tags; target.Policy is this type), kept in
// every history, and the only yardstick the checker judges expiry and
// convergence against, never defaults of its own. One type, so the file,
// the record and the judge cannot drift apart.
type Policy struct {
	TTL            time.Duration `yaml:"ttl" json:"ttl"`                         // how long a key dedupes
	RetryWindow    time.Duration `yaml:"retry_window" json:"retry_window"`       // how late a client retry is still covered
	RecoveryWindow time.Duration `yaml:"recovery_window" json:"recovery_window"` // after faults heal, crashed keys converge within this
	MaxWait        time.Duration `yaml:"max_wait" json:"max_wait"`               // how long a duplicate may be held before 409
	// Production is what the target keeps in production, where the
	// durations above are compressed into seconds for a test run. Zero
	// when not declared: the gateway then keeps keys for the whole
	// test-mode promise (GatewayKeyTTL).
	Production Production `yaml:"production" json:"production,omitzero"`
}

// Production is the production side of a target's promise and of its
// payment provider, declared so that the test-mode gateway can forget
// keys when the production provider would: a server that leans on the
// provider's idempotency for retries it promised to cover is then seen
// charging twice, as its customers would see it.
type Production struct {
	TTL         time.Duration `yaml:"ttl" json:"ttl,omitempty"`                   // how long a key dedupes in production
	RetryWindow time.Duration `yaml:"retry_window" json:"retry_window,omitempty"` // how late a production retry is covered (default: TTL)
	// ProviderKeyLifetime is how long the production payment provider
	// remembers an idempotency key from its first request (Stripe: 24h,
	// DefaultProviderKeyLifetime).
	ProviderKeyLifetime time.Duration `yaml:"provider_key_lifetime" json:"provider_key_lifetime,omitempty"`
}

// DefaultProviderKeyLifetime is Stripe's: keys can be pruned once they
// are 24 hours old.
const DefaultProviderKeyLifetime = 24 * time.Hour

// Promise is how long after a key's first request a production retry is
// covered: max(TTL, retry window); zero when nothing was declared.
func (p Production) Promise() time.Duration { return max(p.TTL, p.RetryWindow) }

// ProviderShare is the share of the production promise that the
// provider's own key lifetime covers: 1 when the provider outlives the
// promise (or nothing was declared), less when the promise outlives the
// provider (24h of a 30-day promise is 1/30).
func (p Production) ProviderShare() float64 {
	promise := p.Promise()
	if promise <= 0 || p.ProviderKeyLifetime <= 0 || p.ProviderKeyLifetime >= promise {
		return 1
	}
	return float64(p.ProviderKeyLifetime) / float64(promise)
}

// MinBoundaryBand is the least half-width of the band around a policy
// boundary (the TTL, the promise's end) inside which a retry proves
// nothing. The client stamps a retry when it sends it; the server measures
// its TTL from its own receipt of the key's first request, on its own
// clock, after network latency and scheduling: under load a retry this
// close to the boundary may be on the other side for the server.
const MinBoundaryBand = 250 * time.Millisecond

// Promise is how long after a key's first request a retry is covered:
// the longer of the TTL and the retry window (docs/protocol.md, Expiry).
func (p Policy) Promise() time.Duration { return max(p.TTL, p.RetryWindow) }

// Band is the half-width of the band around the TTL and around the
// promise's end that the checker grades UNKNOWN and the generators keep
// clear of: max(10% of the TTL, MinBoundaryBand).
func (p Policy) Band() time.Duration { return max(p.TTL/10, MinBoundaryBand) }

// ConvergeSlack is how long past the recovery window idemcheck keeps
// retrying a key whose answer is still indeterminate before convergence
// (M6) is judged on the last answer: room for one try held max_wait by a
// recovery still finishing as the window ends, and a second of round
// trip on a loaded machine: max_wait + 1s, at least 2s. The window counts
// from the last heal of every fault the example lived through, other
// examples' kills included (runner/live.go): an example is judged
// on every fault it lived through, never on its own faults only.
func (p Policy) ConvergeSlack() time.Duration { return max(p.MaxWait+time.Second, 2*time.Second) }

// GatewayKeyTTL is how long the gateway simulator remembers an answered
// Idempotency-Key, from the key's first request (docs/protocol.md, "The
// gateway's own idempotency"). The production provider's key lifetime is
// compressed with the target's test-mode policy: the gateway forgets an
// answered key at the same share of the test-mode promise as the
// provider does of the production one (Production.ProviderShare), never
// later than the promise and its band (a fixed 24h would absorb every
// late retry a target forwards as its own key), and never before 1ms. A
// key in recovery is not forgotten on this clock: in production a
// provider's day outlasts any crash recovery, so the runner has the
// gateway keep the keys of every example one of whose requests got an
// indeterminate answer until the example is over (gatewaysim.KeepKeys),
// and a server that leans on the provider to recover is not judged on a
// forgetting production would not have.
func (p Policy) GatewayKeyTTL() time.Duration {
	ceiling := p.Promise() + p.Band()
	share := p.Production.ProviderShare()
	if share >= 1 {
		return ceiling
	}
	scaled := time.Duration(float64(p.Promise()) * share).Round(time.Millisecond)
	return min(ceiling, max(scaled, time.Millisecond))
}

// WaveTerms is what a crash wave's timing model reads of the policy
// (package crashwave): the promise, its band and the recovery window.
func (p Policy) WaveTerms() crashwave.Terms {
	return crashwave.Terms{Promise: p.Promise(), Band: p.Band(), Recovery: p.RecoveryWindow}
}
