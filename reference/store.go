package reference

import (
	"context"
	"time"
)

// Store is a key store adapter: the one interface between the charge flow
// and the database that keeps idempotency keys, as idempotency libraries
// have one adapter per database. The flow's safety rests on the atomicity
// each method promises below, never on an in-process lock: any number of
// replicas share one database through it. PostgresStore is the reference
// adapter; reference/redisstore keeps keys in Redis.
//
// A key is (tenant, key hash). Its record is unresolved (in_progress or
// needs_recovery: the gateway's answer is not known here) or terminal
// (succeeded or failed: a stored Result). Every time is the caller's `now`
// (Config.Now, moved onto the database's clock by Config.StoreClock), never
// read by a statement, so leases and expiry follow one clock and tests drive
// them with a fake one. Each method is atomic on its
// key: concurrent calls on one key, from any replica, behave as if run one
// after the other. A method that cannot tell whether its write happened
// returns an error; the flow answers 503 and the client's retry finds out.
//
// The contract, method by method:
//
//   - Claim inserts the record of a new key if no record holds it
//     (insert-if-absent): state in_progress, c.RequestID (the gateway
//     request id, recorded before the gateway is called), lease owner
//     c.Owner until c.Now+c.Lease, one attempt, no waiters, created at
//     c.Now, expiring at c.Now+c.TTL, forgotten at c.Now+max(c.TTL,
//     c.Forget). Of concurrent claims on one key exactly one reports
//     claimed. When not claimed it may return the existing record (nil:
//     the caller looks it up).
//   - Reclaim replaces a terminal record whose ForgetAt ≤ c.Now (forgotten,
//     not yet deleted) by a fresh claim as Claim writes it, and reports
//     whether it did; of concurrent reclaims one wins. It never touches an
//     unresolved record or one still inside its dedupe window.
//   - Lookup returns the record, whatever its state (a compacted tombstone
//     too), or ErrNotFound.
//   - Register marks a waiter on an unresolved key (so that Finish and
//     Release wake it, see Notifier) and returns the record as it is at
//     that moment; nil, no error, when the key is absent or terminal.
//     Register and Finish on one key are ordered: either Finish sees the
//     waiter, or Register sees the key finished.
//   - Finish stores a definitive result (succeeded when res.Succeeded(),
//     else failed) only if the key is unresolved and its RequestID is
//     requestID: any holder of the request id may finish (the owner, or a
//     takeover that asked the gateway about the same id; both report the
//     gateway's one decision). It clears the lease owner, wakes the
//     registered waiters with the result, and reports whether it stored;
//     false (no change) when the key was finished already or holds
//     another request id.
//   - Release records an attempt whose outcome is unknown: only if the key
//     is unresolved, its RequestID is requestID and its lease owner is
//     owner, the key moves to needs_recovery with its lease expired (lease
//     until now, no owner) and its waiters are woken. The request id is
//     kept: the key is never freed for a new charge. Otherwise no change.
//   - TakeOver gives an unresolved key whose lease has expired
//     (LeaseUntil ≤ now) to owner until now+lease, in needs_recovery, with
//     one more attempt, and returns the record as taken; nil when the key
//     is absent, terminal or its lease live. Of concurrent takeovers one
//     wins. The RequestID is unchanged: the new owner re-sends it.
//   - LeaseStale is TakeOver for the sweeper, on up to limit unresolved
//     keys with LeaseUntil ≤ now and CreatedAt ≤ now-recoverAfter; a key
//     is taken by one sweeper only (concurrent sweepers share the work).
//   - RenewLeases extends each lease whose key is unresolved, still holds
//     the lease's RequestID and still has owner as its lease owner, to
//     max(LeaseUntil, now+lease); it returns the Lease.ID of each lease
//     still held. The others were taken over, released or finished.
//   - Expire compacts up to limit terminal records past ExpiresAt into
//     tombstones (Key and Params dropped; Fingerprint, State, RequestID and
//     Result kept; Compacted; ExpiresAt moved to ForgetAt) and deletes up
//     to limit tombstones past ForgetAt. Unresolved keys never expire: they
//     are recovered first. A database that deletes by itself (a key's
//     TTL) reports only what it did; a record must stay readable until its
//     ForgetAt.
//   - Ping checks that the database answers (GET /healthz).
type Store interface {
	Claim(ctx context.Context, c Claim) (claimed bool, existing *Record, err error)
	Reclaim(ctx context.Context, c Claim) (bool, error)
	Lookup(ctx context.Context, tenant string, keyHash []byte) (*Record, error)
	Register(ctx context.Context, tenant string, keyHash []byte) (*Record, error)
	Finish(ctx context.Context, tenant string, keyHash []byte, requestID string, res Result, now time.Time) (bool, error)
	Release(ctx context.Context, tenant string, keyHash []byte, requestID, owner string, now time.Time) error
	TakeOver(ctx context.Context, tenant string, keyHash []byte, owner string, now time.Time, lease time.Duration) (*Record, error)
	LeaseStale(ctx context.Context, owner string, now time.Time, lease, recoverAfter time.Duration, limit int) ([]*Record, error)
	RenewLeases(ctx context.Context, owner string, leases []Lease, now time.Time, lease time.Duration) (map[string]bool, error)
	Expire(ctx context.Context, now time.Time, limit int) (compacted, forgotten int64, err error)
	Ping(ctx context.Context) error
}

// Notifier is the optional ability of a store adapter to wake waiters the
// moment a key is finished or released (PostgreSQL's LISTEN/NOTIFY, Redis
// pub/sub). A store without it is polled: the Hub wakes every waiter each
// PollInterval to read its key again.
//
// Listen subscribes to the store's notifications on its own connection,
// calls subscribed each time the subscription is (re)established, then
// calls deliver with each notification's payload until the connection
// fails (its error returned) or ctx ends. A payload is FinishPayload for
// a finish (the result included) or NotifyPayload for a release; a store
// sends one from Finish and Release when a waiter registered, after the
// change is visible to Lookup.
type Notifier interface {
	Listen(ctx context.Context, subscribed func(), deliver func(payload string)) error
}

// Key states, as stored. in_progress and needs_recovery are both
// "unresolved": the outcome at the gateway is not known here yet.
const (
	StateInProgress    = "in_progress"
	StateNeedsRecovery = "needs_recovery"
	StateSucceeded     = "succeeded"
	StateFailed        = "failed"
)

// Claim is a new key's first record. RequestID is generated before the claim
// and recorded in it, so that the gateway is never called for this claim
// under any other id.
type Claim struct {
	Tenant      string
	KeyHash     []byte
	Key         string
	Fingerprint []byte
	RequestID   string
	Params      ChargeParams
	Owner       string        // replica id holding the lease
	Now         time.Time     // the claim time; the TTL runs from it
	Lease       time.Duration // how long the owner may work before a retry may take over
	TTL         time.Duration // full record kept this long
	Forget      time.Duration // the key stays bound (tombstone) this long; ≥ TTL
}

// Record is a key's stored state, as a store adapter reads it.
type Record struct {
	Tenant      string
	KeyHash     []byte
	Key         string // "" once compacted
	Fingerprint []byte
	State       string
	RequestID   string
	Params      ChargeParams // zero once compacted
	LeaseOwner  string
	LeaseUntil  time.Time
	Attempts    int
	Result      Result // set when Terminal
	CreatedAt   time.Time
	ExpiresAt   time.Time
	ForgetAt    time.Time
	Compacted   bool
}

// Terminal reports whether the record holds a definitive result.
func (r *Record) Terminal() bool { return r.State == StateSucceeded || r.State == StateFailed }
