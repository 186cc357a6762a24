package reference

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults. A live owner renews its lease while its gateway call runs
// (Keeper), so it is never taken over, and a dead owner's key is
// recovered a lease after its last renewal; the max wait is shorter than
// a client's timeout; the tombstone window covers a month of late retries.
const (
	DefaultTTL              = 24 * time.Hour
	DefaultTombstoneTTL     = 30 * 24 * time.Hour
	DefaultMaxWait          = 5 * time.Second
	DefaultLease            = 30 * time.Second
	DefaultSweepInterval    = 5 * time.Second
	DefaultRecoveryAfter    = time.Minute
	DefaultGatewayTimeout   = 10 * time.Second
	DefaultGatewayKeyWindow = 23 * time.Hour
	DefaultSweepBatch       = 100
)

// Config configures a Server. Zero durations take the defaults above.
type Config struct {
	// Pool is the PostgreSQL database of the default store; Migrate must
	// have run on it. Unused when Store is set.
	Pool *pgxpool.Pool
	// Store is the key store adapter; default NewPostgresStore(Pool).
	Store Store
	// Gateway is the payment gateway client; its API field says whether
	// charges go through /v1/charges or PaymentIntents.
	Gateway *Gateway
	// TTL is how long a finished key's full record is kept, from the first
	// request with the key.
	TTL time.Duration
	// TombstoneTTL is how long, from the first request, a key stays bound
	// to its request and its result: past the TTL a compact tombstone keeps
	// answering a late retry of the same request with the original result.
	// The effective dedupe window is max(TTL, TombstoneTTL).
	TombstoneTTL time.Duration
	// MaxWait bounds how long a duplicate waits for the key's owner before
	// 409 + Retry-After.
	MaxWait time.Duration
	// Lease is how long a claim's owner may go without renewing it before
	// a retry or the sweeper may take the key over; the owner renews it
	// every third of a lease while its gateway call runs.
	Lease time.Duration
	// SweepInterval is the sweeper's period; negative disables the
	// background sweeper (tests call SweepOnce).
	SweepInterval time.Duration
	// RecoveryAfter is the age after which the sweeper recovers an
	// unresolved key whose lease has expired, without waiting for a retry.
	RecoveryAfter time.Duration
	// GatewayKeyWindow is how long the gateway is trusted to remember a
	// request id (Stripe: 24h). Recovery of an older claim first searches
	// the gateway by order and request id, since a re-send would no longer
	// be deduplicated there.
	GatewayKeyWindow time.Duration
	// SweepBatch bounds the rows one sweeper statement touches.
	SweepBatch int
	// ReplicaID names this replica as a lease owner; default random.
	ReplicaID string
	// Now is the clock that every stored time and every lease and expiry
	// comparison uses; default time.Now. Waiting uses real timers.
	Now func() time.Time
	// StoreClock moves Now onto the store's clock when the store can read
	// it (Clocked; PostgresStore can): the server measures the offset when
	// Run starts and before every sweep. Replicas whose system clocks
	// disagree (a clock skewed by seconds) then agree on leases and expiry,
	// as if they shared one clock. The Date header keeps Now.
	StoreClock bool
	// Logger receives structured logs; default slog.Default().
	Logger *slog.Logger
	// Registry receives the metrics and serves /metrics; default a fresh
	// registry, so several servers can live in one process.
	Registry *prometheus.Registry
}

func (c Config) withDefaults() (Config, error) {
	if c.Store == nil && c.Pool == nil {
		return c, errors.New("reference: Config.Pool or Config.Store is required")
	}
	if c.Store == nil {
		c.Store = NewPostgresStore(c.Pool)
	}
	if c.Gateway == nil {
		return c, errors.New("reference: Config.Gateway is required")
	}
	if _, err := ParseGatewayAPI(string(c.Gateway.API)); err != nil {
		return c, fmt.Errorf("reference: Config.Gateway.API: %w", err)
	}
	if _, err := ParseGatewayProvider(string(c.Gateway.Provider)); err != nil {
		return c, fmt.Errorf("reference: Config.Gateway.Provider: %w", err)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.TTL, DefaultTTL)
	def(&c.TombstoneTTL, DefaultTombstoneTTL)
	def(&c.MaxWait, DefaultMaxWait)
	def(&c.Lease, DefaultLease)
	def(&c.SweepInterval, DefaultSweepInterval)
	def(&c.RecoveryAfter, DefaultRecoveryAfter)
	def(&c.GatewayKeyWindow, DefaultGatewayKeyWindow)
	if c.SweepBatch <= 0 {
		c.SweepBatch = DefaultSweepBatch
	}
	if c.ReplicaID == "" {
		c.ReplicaID = NewID("replica_")
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	if c.TTL < 0 || c.TombstoneTTL < 0 || c.MaxWait < 0 || c.Lease < 0 || c.RecoveryAfter < 0 {
		return c, errors.New("reference: durations must not be negative")
	}
	return c, nil
}

// ParseDuration reads a duration as Go spells it ("90s", "24h"), with a "d"
// suffix for days ("30d") and a bare number meaning seconds ("86400").
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil {
			return time.Duration(n * float64(24*time.Hour)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q (want e.g. 30s, 24h, 30d)", s)
	}
	return d, nil
}
