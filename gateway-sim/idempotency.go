package gatewaysim

import (
	"time"
)

// idemScope is where an idempotency key lives: Stripe scopes keys to the
// account, which here is the API key.
type idemScope struct {
	apiKey string
	key    string
}

// idemEntry is one key's record. It is in flight from reservation until the
// gateway decides; from then on it holds the response to replay. Guarded by
// Sim.mu.
type idemEntry struct {
	fingerprint string
	created     time.Time
	done        bool
	resp        *response
}

// idemOutcome is what the store says about an incoming request's key.
type idemOutcome int

const (
	idemFresh    idemOutcome = iota // unknown (or expired) key: process the request
	idemReplay                      // decided: send the stored response again
	idemInFlight                    // another request with the key is being processed: 409
	idemMismatch                    // the key was first used with other parameters: 400
)

// expiry remembers insertion order so expired keys can be swept in O(1)
// amortised time; the TTL runs from the first request with the key.
type expiry struct {
	scope idemScope
	entry *idemEntry
}

// idemStore holds Stripe-style idempotency records with a TTL measured on
// the injectable clock.
type idemStore struct {
	ttl     time.Duration
	entries map[idemScope]*idemEntry
	order   []expiry
}

func newIdemStore(ttl time.Duration) *idemStore {
	return &idemStore{ttl: ttl, entries: make(map[idemScope]*idemEntry)}
}

func (st *idemStore) expired(e *idemEntry, now time.Time) bool {
	return !now.Before(e.created.Add(st.ttl))
}

// lookup classifies a request; expired keys are forgotten first, so a reuse
// after the TTL is processed afresh, as Stripe does once a key is pruned.
func (st *idemStore) lookup(sc idemScope, fingerprint string, now time.Time) (idemOutcome, *idemEntry) {
	st.sweep(now)
	e, ok := st.entries[sc]
	switch {
	case ok && st.expired(e, now):
		delete(st.entries, sc)
		return idemFresh, nil
	case !ok:
		return idemFresh, nil
	case e.fingerprint != fingerprint:
		return idemMismatch, e
	case !e.done:
		return idemInFlight, e
	default:
		return idemReplay, e
	}
}

// reserve records an in-flight request under its key.
func (st *idemStore) reserve(sc idemScope, fingerprint string, now time.Time) *idemEntry {
	e := &idemEntry{fingerprint: fingerprint, created: now}
	st.entries[sc] = e
	st.order = append(st.order, expiry{sc, e})
	return e
}

// complete stores the gateway's decision for replay.
func (st *idemStore) complete(e *idemEntry, resp *response) {
	e.done, e.resp = true, resp
}

// abort forgets an in-flight request that moved no money, so a retry with
// the same key is processed afresh (the fail-before-charge outage).
func (st *idemStore) abort(sc idemScope, e *idemEntry) {
	if st.entries[sc] == e {
		delete(st.entries, sc)
	}
}

// sweep drops expired records from the front of the insertion order.
func (st *idemStore) sweep(now time.Time) {
	n := 0
	for ; n < len(st.order) && st.expired(st.order[n].entry, now); n++ {
		x := st.order[n]
		if st.entries[x.scope] == x.entry {
			delete(st.entries, x.scope)
		}
		st.order[n] = expiry{} // let the entry be collected
	}
	// Re-slicing is enough: append reallocates (copying only the live tail)
	// once the shrunken capacity runs out.
	st.order = st.order[n:]
}
