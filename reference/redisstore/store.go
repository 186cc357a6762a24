package redisstore

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idemcheck/idemcheck/reference"
)

// Names of the store's Redis keys and channel. A record is
// "idemcheck:key:<tenant>:<key hash hex>".
const (
	prefix      = "idemcheck:"
	leaseIndex  = prefix + "leases"   // unresolved keys, scored by lease expiry (µs)
	finishIndex = prefix + "finished" // terminal keys not yet compacted, scored by expiry (µs)
	// Channel is the pub/sub channel of finish and release notifications.
	Channel = prefix + "keys"
)

// staleCandidates bounds, in multiples of the sweep's limit, the expired
// leases LeaseStale looks at: some of them may be too young to recover.
const staleCandidates = 4

// Store is the reference.Store adapter for Redis. See the package doc.
type Store struct {
	client *redis.Client
}

var (
	_ reference.Store    = (*Store)(nil)
	_ reference.Notifier = (*Store)(nil)
)

// New returns the adapter over client (see ParseURL for its options).
func New(client *redis.Client) *Store { return &Store{client: client} }

// ParseURL reads a redis://host:port/db URL into the client options the
// store runs with: no automatic retries (a retried script whose first run
// happened would be read as someone else's claim; the flow answers 503
// and the client retries instead, as with PostgreSQL), and the caller's
// context deadlines applied to every command.
func ParseURL(url string) (*redis.Options, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	opts.MaxRetries = -1
	opts.ContextTimeoutEnabled = true
	return opts, nil
}

// Client is the underlying client, for variants that need their own
// commands.
func (s *Store) Client() *redis.Client { return s.client }

// RecordKey is the Redis key of a key's record.
func RecordKey(tenant string, keyHash []byte) string {
	return prefix + "key:" + tenant + ":" + hex.EncodeToString(keyHash)
}

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error { return s.client.Ping(ctx).Err() }

// Clock reads Redis's clock (TIME): reference.Clocked.
func (s *Store) Clock(ctx context.Context) (time.Time, error) { return s.client.Time(ctx).Result() }

// ttl is a Redis PX argument: d in milliseconds, rounded up, at least 1.
func ttl(d time.Duration) int64 { return int64(max(1, (d+time.Millisecond-1)/time.Millisecond)) }

// Claim writes the claim's record with SET NX PX (the TTL is the key's
// whole dedupe window, max(TTL, Forget)) and indexes its lease, in one
// script; when the key exists it returns the existing record instead.
func (s *Store) Claim(ctx context.Context, c reference.Claim) (bool, *reference.Record, error) {
	v, err := encode(claimDoc(c))
	if err != nil {
		return false, nil, fmt.Errorf("claim: %w", err)
	}
	k := RecordKey(c.Tenant, c.KeyHash)
	res, err := claimScript.Run(ctx, s.client, []string{k, leaseIndex}, v, ttl(max(c.Forget, c.TTL)),
		micros(c.Now.Add(c.Lease))).Slice()
	if err != nil {
		return false, nil, fmt.Errorf("claim: %w", err)
	}
	if len(res) == 1 {
		return true, nil, nil
	}
	existing, ok := res[1].(string)
	if !ok {
		return false, nil, nil
	}
	rec, err := decode(existing)
	return false, rec, err
}

// Reclaim replaces a forgotten terminal record by the claim's.
func (s *Store) Reclaim(ctx context.Context, c reference.Claim) (bool, error) {
	v, err := encode(claimDoc(c))
	if err != nil {
		return false, fmt.Errorf("reclaim: %w", err)
	}
	n, err := reclaimScript.Run(ctx, s.client, []string{RecordKey(c.Tenant, c.KeyHash), leaseIndex, finishIndex},
		v, ttl(max(c.Forget, c.TTL)), micros(c.Now.Add(c.Lease)), micros(c.Now)).Int()
	if err != nil {
		return false, fmt.Errorf("reclaim: %w", err)
	}
	return n == 1, nil
}

// Lookup reads a key's record, or reference.ErrNotFound.
func (s *Store) Lookup(ctx context.Context, tenant string, keyHash []byte) (*reference.Record, error) {
	v, err := s.client.Get(ctx, RecordKey(tenant, keyHash)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, reference.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	return decode(v)
}

// Register counts a waiter on an unresolved key.
func (s *Store) Register(ctx context.Context, tenant string, keyHash []byte) (*reference.Record, error) {
	return s.recordOrNil(registerScript.Run(ctx, s.client, []string{RecordKey(tenant, keyHash)}), "register waiter")
}

// Finish stores the result if the key is unresolved under requestID, and
// publishes it to the waiters if any registered.
func (s *Store) Finish(ctx context.Context, tenant string, keyHash []byte, requestID string, res reference.Result, now time.Time) (bool, error) {
	state := reference.StateFailed
	if res.Succeeded() {
		state = reference.StateSucceeded
	}
	n, err := finishScript.Run(ctx, s.client, []string{RecordKey(tenant, keyHash), leaseIndex, finishIndex},
		requestID, state, strconv.Itoa(res.Status), base64.StdEncoding.EncodeToString(res.Body), res.ChargeID,
		micros(now), Channel, reference.FinishPayload(tenant, keyHash, requestID, res)).Int()
	if err != nil {
		return false, fmt.Errorf("finish: %w", err)
	}
	return n == 1, nil
}

// Release moves the key to needs_recovery, lease expired, if owner holds
// it under requestID, and wakes its waiters.
func (s *Store) Release(ctx context.Context, tenant string, keyHash []byte, requestID, owner string, now time.Time) error {
	err := releaseScript.Run(ctx, s.client, []string{RecordKey(tenant, keyHash), leaseIndex},
		requestID, owner, micros(now), Channel, reference.NotifyPayload(tenant, keyHash)).Err()
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

// TakeOver gives an unresolved key whose lease expired to owner.
func (s *Store) TakeOver(ctx context.Context, tenant string, keyHash []byte, owner string, now time.Time, lease time.Duration) (*reference.Record, error) {
	return s.recordOrNil(takeoverScript.Run(ctx, s.client, []string{RecordKey(tenant, keyHash), leaseIndex},
		owner, micros(now), micros(now.Add(lease))), "take over")
}

// recordOrNil reads a script's answer: a record, or nil for Redis's nil.
func (s *Store) recordOrNil(cmd *redis.Cmd, op string) (*reference.Record, error) {
	v, err := cmd.Text()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return decode(v)
}

// LeaseStale takes over up to limit unresolved keys whose lease expired
// and that were claimed at least recoverAfter ago: it reads the expired
// leases from the lease index, then takes those still stale in one
// script, so concurrent sweepers never take one key twice.
func (s *Store) LeaseStale(ctx context.Context, owner string, now time.Time, lease, recoverAfter time.Duration, limit int) ([]*reference.Record, error) {
	keys, err := s.due(ctx, leaseIndex, now, staleCandidates*limit)
	if err != nil || len(keys) == 0 {
		return nil, wrap("lease stale", err)
	}
	vals, err := leaseStaleScript.Run(ctx, s.client, append([]string{leaseIndex}, keys...),
		owner, micros(now), micros(now.Add(lease)), micros(now.Add(-recoverAfter)), limit).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("lease stale: %w", err)
	}
	recs := make([]*reference.Record, 0, len(vals))
	for _, v := range vals {
		rec, err := decode(v)
		if err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// due lists up to limit members of an index scored at or before now.
func (s *Store) due(ctx context.Context, index string, now time.Time, limit int) ([]string, error) {
	return s.client.ZRangeArgs(ctx, redis.ZRangeArgs{Key: index, ByScore: true, Start: "-inf",
		Stop: strconv.FormatInt(micros(now), 10), Count: int64(limit)}).Result()
}

// RenewLeases extends the leases owner still holds, each checked against
// its owner token (owner and request id), in one script.
func (s *Store) RenewLeases(ctx context.Context, owner string, leases []reference.Lease, now time.Time, lease time.Duration) (map[string]bool, error) {
	keys := make([]string, 0, len(leases)+1)
	args := make([]any, 0, len(leases)+2)
	keys = append(keys, leaseIndex)
	args = append(args, owner, micros(now.Add(lease)))
	for _, l := range leases {
		keys = append(keys, RecordKey(l.Tenant, l.KeyHash))
		args = append(args, l.RequestID)
	}
	pos, err := renewScript.Run(ctx, s.client, keys, args...).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	held := make(map[string]bool, len(pos))
	for _, p := range pos {
		held[leases[p-1].ID()] = true
	}
	return held, nil
}

// Expire compacts up to limit terminal records past their expiry into
// tombstones. Redis deletes a tombstone itself at its forget time (the
// key's TTL), so forgotten is always 0.
func (s *Store) Expire(ctx context.Context, now time.Time, limit int) (compacted, forgotten int64, err error) {
	keys, err := s.due(ctx, finishIndex, now, limit)
	if err != nil || len(keys) == 0 {
		return 0, 0, wrap("expire", err)
	}
	n, err := expireScript.Run(ctx, s.client, append([]string{finishIndex}, keys...), micros(now)).Int64()
	if err != nil {
		return 0, 0, fmt.Errorf("expire: %w", err)
	}
	return n, 0, nil
}

// wrap prefixes err with op; nil stays nil.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}

// ErrNotRedis is returned by From for a store that is not this adapter.
var ErrNotRedis = errors.New("this variant keeps its keys in Redis (run it with --store=redis)")

// From is s as the Redis adapter, for the variants built on Redis; a
// variant started on another store fails at start-up instead of running
// as something it is not.
func From(s reference.Store) (*Store, error) {
	rs, ok := s.(*Store)
	if !ok {
		return nil, fmt.Errorf("%w; the store is %T", ErrNotRedis, s)
	}
	return rs, nil
}
