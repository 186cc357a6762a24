package history

import "time"

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

// GatewayKeyTTL is how long the gateway simulator remembers an
// Idempotency-Key when it remembers keys at all. A real gateway keeps
// keys for about as long as a server keeps its own (Stripe: 24h), so the
// simulator's window is compressed with the target's test-mode policy:
// the promise and its boundary band, not a fixed 24h that would absorb
// every late retry a target forwards as its own key.
func (p Policy) GatewayKeyTTL() time.Duration { return p.Promise() + p.Band() }
