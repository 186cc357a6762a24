package reference

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Lease is a claim whose lease its owner holds while the claim's gateway
// call runs.
type Lease struct {
	Tenant    string
	KeyHash   []byte
	RequestID string
	// Granted is when the lease was last set (the claim); zero: when the
	// keeper starts holding it.
	Granted time.Time
}

// ID names the claim a lease is on: what Store.RenewLeases returns for
// a lease still held.
func (l Lease) ID() string { return l.Tenant + "\x00" + string(l.KeyHash) + "\x00" + l.RequestID }

// Keeper holds the leases of one replica's claims in flight. It renews
// every held lease every third of a lease length: a live owner is never
// taken over however long the gateway takes, while a dead owner's key is
// free for recovery one lease after its last renewal, whatever the gateway
// timeout. A lease's first renewal is due a third of a lease after it was
// granted, at once if that has passed (an owner slow between its claim and
// its gateway call, a takeover of an old claim).
//
// All the leases due at a tick are renewed in one statement; a lease due
// within half a period of the tick is renewed with it, so the claims in
// flight together share their ticks. A renewal that fails (the database
// unreachable) is retried at the next tick; the call goes on, since a
// takeover re-sends the same request id and the gateway's idempotency
// keeps both askers to one charge. A lease is dropped when its holder
// releases it or when its key is no longer the owner's.
type Keeper struct {
	store  Store
	owner  string
	length time.Duration
	every  time.Duration
	now    func() time.Time
	log    *slog.Logger

	mu      sync.Mutex
	held    map[*heldLease]struct{}
	running bool
	wake    chan struct{}
}

// heldLease is a lease and, in real time, when its next renewal is due.
type heldLease struct {
	Lease
	due time.Time
}

// NewKeeper returns a keeper renewing owner's leases of length with now's
// clock (stored times); it waits with real timers. It runs a goroutine
// only while it holds a lease.
func NewKeeper(store Store, owner string, length time.Duration, now func() time.Time, log *slog.Logger) *Keeper {
	return &Keeper{store: store, owner: owner, length: length, every: max(length/3, time.Millisecond), now: now, log: log,
		held: map[*heldLease]struct{}{}, wake: make(chan struct{}, 1)}
}

// Hold renews l until release is called. release returns at once: a
// renewal already under way may still land, which only extends a lease
// that finishing or releasing the key then ends.
func (k *Keeper) Hold(l Lease) (release func()) {
	first := k.every
	if !l.Granted.IsZero() {
		first -= k.now().Sub(l.Granted)
	}
	h := &heldLease{Lease: l, due: time.Now().Add(first)}
	k.mu.Lock()
	k.held[h] = struct{}{}
	start := !k.running
	k.running = true
	k.mu.Unlock()
	if start {
		go k.run()
	}
	k.poke()
	return func() {
		k.mu.Lock()
		delete(k.held, h)
		k.mu.Unlock()
		k.poke()
	}
}

// poke makes the loop look at the held leases again.
func (k *Keeper) poke() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// run renews leases as they fall due, until none is held.
func (k *Keeper) run() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		next, ok := k.next()
		if !ok {
			return
		}
		if d := time.Until(next); d > 0 {
			t.Reset(d)
			select {
			case <-t.C:
			case <-k.wake:
				t.Stop()
				continue
			}
		}
		k.tick()
	}
}

// next is the earliest due renewal; false (and the loop marked stopped)
// when no lease is held.
func (k *Keeper) next() (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.held) == 0 {
		k.running = false
		return time.Time{}, false
	}
	var next time.Time
	for h := range k.held {
		if next.IsZero() || h.due.Before(next) {
			next = h.due
		}
	}
	return next, true
}

// tick renews the leases due (within half a period) in one statement and
// drops those no longer the owner's.
func (k *Keeper) tick() {
	batch := k.due(time.Now())
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), k.length)
	defer cancel()
	leases := make([]Lease, len(batch))
	for i, h := range batch {
		leases[i] = h.Lease
	}
	held, err := k.store.RenewLeases(ctx, k.owner, leases, k.now(), k.length)
	if err != nil {
		k.log.Warn("lease renewal failed", "leases", len(leases), "err", err)
		return
	}
	k.drop(batch, held)
}

// due takes the leases due by now plus half a period and schedules their
// next renewal a period from now.
func (k *Keeper) due(now time.Time) []*heldLease {
	k.mu.Lock()
	defer k.mu.Unlock()
	var batch []*heldLease
	for h := range k.held {
		if h.due.Before(now.Add(k.every / 2)) {
			h.due = now.Add(k.every)
			batch = append(batch, h)
		}
	}
	return batch
}

// drop forgets the leases of batch that are not in held.
func (k *Keeper) drop(batch []*heldLease, held map[string]bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, h := range batch {
		if !held[h.ID()] {
			delete(k.held, h)
		}
	}
}
