package gatewaysim

import (
	"strings"
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
	order       string // the order the request pays for (the trace's): what a KeepKeys names
	created     time.Time
	done        bool
	resp        *response
}

// idemOutcome is what the store says about an incoming request's key.
type idemOutcome int

const (
	idemFresh    idemOutcome = iota // unknown (or forgotten) key: process the request
	idemReplay                      // decided: send the stored response again
	idemInFlight                    // another request with the key is being processed: 409
	idemMismatch                    // the key was first used with other parameters: 400
)

// expiry remembers insertion order so old records can be swept in O(1)
// amortised time; the lifetime runs from the first request with the key.
type expiry struct {
	scope idemScope
	entry *idemEntry
}

// KeepHorizon is how long after a key's first request a KeepKeys may
// still reach it: a record the provider's lifetime has forgotten is kept
// (answered as forgotten) that long at least, and a KeepKeys of its
// order in that time revives it. Nothing can tell a record revived from
// one kept all along: a request for a forgotten key replaces its record.
// The runner keeps an example's orders' keys as soon as a fault strikes it;
// the horizon covers a key answered just before the strike, whose answer
// the crash kept from its server.
const KeepHorizon = time.Minute

// idemStore holds the idempotency records, each forgotten on its own
// clock (measured on the injectable clock): an answered key at the
// provider's lifetime from its first request, a key in flight never, and
// a key whose order a KeepKeys holds not before that ends.
type idemStore struct {
	ttl     time.Duration
	entries map[idemScope]*idemEntry
	order   []expiry
	kept    map[string]time.Time // order prefix -> kept until (zero: until a later KeepKeys ends it)
}

func newIdemStore(ttl time.Duration) *idemStore {
	return &idemStore{ttl: ttl, entries: make(map[idemScope]*idemEntry), kept: map[string]time.Time{}}
}

// forgotten says the provider no longer knows the key: it was answered,
// its lifetime has run out, and no KeepKeys holds its order.
func (st *idemStore) forgotten(e *idemEntry, now time.Time) bool {
	return e.done && !now.Before(e.created.Add(st.ttl)) && !st.holds(e.order, now)
}

// gone says the record may be dropped: forgotten, and past the horizon
// within which a KeepKeys may still revive it.
func (st *idemStore) gone(e *idemEntry, now time.Time) bool {
	return st.forgotten(e, now) && !now.Before(e.created.Add(max(st.ttl, KeepHorizon)))
}

// holds says whether a KeepKeys keeps order's keys at now.
func (st *idemStore) holds(order string, now time.Time) bool {
	for prefix, until := range st.kept {
		if order != "" && strings.HasPrefix(order, prefix) && (until.IsZero() || now.Before(until)) {
			return true
		}
	}
	return false
}

// keep keeps the keys of the orders starting with prefix until until
// (zero: until a later keep ends it), replacing an earlier keep of prefix;
// those that have ended are dropped.
func (st *idemStore) keep(prefix string, until, now time.Time) {
	for p, u := range st.kept {
		if !u.IsZero() && !now.Before(u) {
			delete(st.kept, p)
		}
	}
	st.kept[prefix] = until
}

// lookup classifies a request; a forgotten key is dropped first, so a
// reuse after the lifetime is processed afresh, as Stripe does once a key
// is pruned.
func (st *idemStore) lookup(sc idemScope, fingerprint string, now time.Time) (idemOutcome, *idemEntry) {
	st.sweep(now)
	e, ok := st.entries[sc]
	switch {
	case ok && st.forgotten(e, now):
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

// reserve records an in-flight request for order under its key.
func (st *idemStore) reserve(sc idemScope, fingerprint, order string, now time.Time) *idemEntry {
	e := &idemEntry{fingerprint: fingerprint, order: order, created: now}
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

// sweep drops the records that are gone from the front of the insertion
// order; it stops at the first that is not (one in flight or kept
// holds the younger ones back until it goes).
func (st *idemStore) sweep(now time.Time) {
	n := 0
	for ; n < len(st.order); n++ {
		x := st.order[n]
		live := st.entries[x.scope] == x.entry
		if live && !st.gone(x.entry, now) {
			break
		}
		if live {
			delete(st.entries, x.scope)
		}
		st.order[n] = expiry{} // let the entry be collected
	}
	// Re-slicing is enough: append reallocates (copying only the live tail)
	// once the shrunken capacity runs out.
	st.order = st.order[n:]
}
