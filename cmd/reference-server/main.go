// Command reference-server runs the reference idempotency server: the charge
// protocol of docs/protocol.md, its keys in PostgreSQL, Redis or MySQL
// (STORE), charging through a Stripe-like gateway (its /v1/charges, or
// PaymentIntents with GATEWAY_API=payment_intents). Configuration comes
// from the environment (LISTEN_ADDR, DATABASE_URL, REDIS_URL or MYSQL_DSN,
// GATEWAY_URL, GATEWAY_API_KEY, GATEWAY_API, IDEMPOTENCY_TTL, …) and from
// flags of the same meaning, flags winning. FAKETIME (libfaketime's
// relative form, "+3s") moves its wall clock, which libfaketime itself
// cannot reach in a Go binary. It prints
// "reference-server listening on http://ADDR" once it serves, and shuts down
// gracefully on SIGINT or SIGTERM, letting in-flight requests finish.
//
// It imports only reference, its store adapters, reference/zoo and
// reference/garden: the server under test knows nothing of the harness
// that judges it.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/mysqlstore"
	"github.com/idemcheck/idemcheck/reference/redisstore"
	"github.com/idemcheck/idemcheck/reference/zoo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "reference-server:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// options is the parsed configuration.
type options struct {
	listen, store, databaseURL, redisURL, mysqlDSN, gatewayURL, gatewayAPIKey, logLevel, logFormat string
	variant                                                                                        zoo.Variant
	clockOffset                                                                                    time.Duration  // FAKETIME, libfaketime's form
	redisOptions                                                                                   *redis.Options // parsed --redis-url
	gatewayAPI                                                                                     reference.GatewayAPI
	gatewayProvider                                                                                reference.GatewayProvider
	orderAt                                                                                        reference.OrderAt

	ttl, tombstoneTTL, maxWait, lease, sweepInterval, recoveryAfter, gatewayTimeout, gatewayKeyWindow, startTimeout time.Duration
}

// durationFlag is a time.Duration flag read with reference.ParseDuration
// (so "30d" and bare seconds work as in the environment).
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}
func (f durationFlag) Set(s string) error {
	d, err := reference.ParseDuration(s)
	if err == nil {
		*f.d = d
	}
	return err
}

func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	o := options{}
	durations := []struct {
		p            *time.Duration
		flag, envVar string
		def          time.Duration
		usage        string
	}{
		{&o.ttl, "ttl", "IDEMPOTENCY_TTL", reference.DefaultTTL, "full results are kept this long from the first request"},
		{&o.tombstoneTTL, "tombstone-ttl", "IDEMPOTENCY_TOMBSTONE_TTL", reference.DefaultTombstoneTTL, "a key stays bound to its request and result this long (tombstone)"},
		{&o.maxWait, "max-wait", "IDEMPOTENCY_MAX_WAIT", reference.DefaultMaxWait, "a duplicate waits this long for the owner before 409"},
		{&o.lease, "lease", "IDEMPOTENCY_LEASE", reference.DefaultLease, "an owner's lease on a claim, renewed while its gateway call runs; a dead owner's key is recovered this long after its last renewal"},
		{&o.sweepInterval, "sweep-interval", "SWEEP_INTERVAL", reference.DefaultSweepInterval, "sweeper period (negative disables)"},
		{&o.recoveryAfter, "recovery-after", "RECOVERY_AFTER", reference.DefaultRecoveryAfter, "the sweeper recovers unresolved keys older than this"},
		{&o.gatewayTimeout, "gateway-timeout", "GATEWAY_TIMEOUT", reference.DefaultGatewayTimeout, "timeout of one gateway call"},
		{&o.gatewayKeyWindow, "gateway-key-window", "GATEWAY_KEY_WINDOW", reference.DefaultGatewayKeyWindow, "how long the gateway remembers a request id; older claims are recovered by search, not re-send"},
		{&o.startTimeout, "start-timeout", "START_TIMEOUT", 30 * time.Second, "how long to wait for the database at start-up"},
	}
	fs := flag.NewFlagSet("reference-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", env("LISTEN_ADDR", "127.0.0.1:8080"), "listen address (env LISTEN_ADDR)")
	fs.StringVar(&o.store, "store", env("STORE", storePostgres), "where keys are kept: postgres, redis or mysql (env STORE)")
	fs.StringVar(&o.databaseURL, "database-url", env("DATABASE_URL", ""), "PostgreSQL URL, for --store=postgres (env DATABASE_URL)")
	fs.StringVar(&o.redisURL, "redis-url", env("REDIS_URL", ""), "Redis URL redis://host:port/db, for --store=redis (env REDIS_URL)")
	fs.StringVar(&o.mysqlDSN, "mysql-dsn", env("MYSQL_DSN", ""), "MySQL DSN user:pass@tcp(host:port)/db, for --store=mysql (env MYSQL_DSN)")
	fs.StringVar(&o.gatewayURL, "gateway-url", env("GATEWAY_URL", ""), "payment gateway base URL (env GATEWAY_URL)")
	fs.StringVar(&o.gatewayAPIKey, "gateway-api-key", env("GATEWAY_API_KEY", ""), "the server's secret key at the gateway (env GATEWAY_API_KEY)")
	orderAt := fs.String("gateway-order", env("GATEWAY_ORDER", ""), "where the gateway call names the order: metadata[KEY] (default metadata[order_id]), description (\"Order <id>\") or none (env GATEWAY_ORDER)")
	gatewayProvider := fs.String("gateway-provider", env("GATEWAY_PROVIDER", string(reference.StripeProvider)), "the payment provider to charge through: stripe, checkout (Checkout.com's POST /payments) or adyen (Adyen's POST /v71/payments) (env GATEWAY_PROVIDER)")
	gatewayAPI := fs.String("gateway-api", env("GATEWAY_API", string(reference.ChargesAPI)), "the Stripe API to charge through: charges (POST /v1/charges) or payment_intents (POST /v1/payment_intents with confirm=true) (env GATEWAY_API)")
	fs.StringVar(&o.logLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (env LOG_LEVEL)")
	fs.StringVar(&o.logFormat, "log-format", env("LOG_FORMAT", "json"), "json or text (env LOG_FORMAT)")
	variant := fs.String("variant", env("VARIANT", "reference"), "the server to run: reference, a broken zoo variant or a garden variant, for self-validation (env VARIANT)")
	var envErr error
	for _, d := range durations {
		*d.p = d.def
		if v := getenv(d.envVar); v != "" {
			if err := (durationFlag{d.p}).Set(v); err != nil && envErr == nil {
				envErr = fmt.Errorf("%w: %s: %v", errUsage, d.envVar, err)
			}
		}
		fs.Var(durationFlag{d.p}, d.flag, d.usage+" (env "+d.envVar+")")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if envErr != nil {
		return o, envErr
	}
	var err error
	if o.clockOffset, err = reference.ParseFakeTime(getenv("FAKETIME")); err != nil {
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if o.variant, err = lookupVariant(*variant); err != nil {
		return o, fmt.Errorf("%w: --variant: %v", errUsage, err)
	}
	if o.gatewayProvider, err = reference.ParseGatewayProvider(*gatewayProvider); err != nil {
		return o, fmt.Errorf("%w: --gateway-provider (env GATEWAY_PROVIDER): %v", errUsage, err)
	}
	if o.gatewayAPI, err = reference.ParseGatewayAPI(*gatewayAPI); err != nil {
		return o, fmt.Errorf("%w: --gateway-api (env GATEWAY_API): %v", errUsage, err)
	}
	if o.orderAt, err = reference.ParseOrderAt(*orderAt); err != nil {
		return o, fmt.Errorf("%w: --gateway-order (env GATEWAY_ORDER): %v", errUsage, err)
	}
	storeURL, err := o.storeURL()
	if err != nil {
		return o, err
	}
	var missing []string
	for _, req := range [][2]string{storeURL, {"GATEWAY_URL", o.gatewayURL}, {"GATEWAY_API_KEY", o.gatewayAPIKey}} {
		if req[1] == "" {
			missing = append(missing, req[0])
		}
	}
	if len(missing) > 0 {
		return o, fmt.Errorf("%w: missing %s (environment or flag)", errUsage, strings.Join(missing, ", "))
	}
	return o, o.parseStoreURL()
}

// parseStoreURL checks the selected store's address, so a bad one is a
// usage error at start-up.
func (o *options) parseStoreURL() error {
	var err error
	switch o.store {
	case storeRedis:
		if o.redisOptions, err = redisstore.ParseURL(o.redisURL); err != nil {
			return fmt.Errorf("%w: --redis-url (REDIS_URL): %v (want redis://host:port/db)", errUsage, err)
		}
	case storeMySQL:
		if _, err = mysqlstore.Config(o.mysqlDSN); err != nil {
			return fmt.Errorf("%w: --mysql-dsn (MYSQL_DSN): %v (want user:pass@tcp(host:port)/db)", errUsage, err)
		}
	}
	return nil
}

// The stores --store selects.
const (
	storePostgres = "postgres"
	storeRedis    = "redis"
	storeMySQL    = "mysql"
)

// storeURL is the variable naming the selected store and its value.
func (o options) storeURL() ([2]string, error) {
	switch o.store {
	case storePostgres:
		return [2]string{"DATABASE_URL", o.databaseURL}, nil
	case storeRedis:
		return [2]string{"REDIS_URL", o.redisURL}, nil
	case storeMySQL:
		return [2]string{"MYSQL_DSN", o.mysqlDSN}, nil
	}
	return [2]string{}, fmt.Errorf("%w: --store: unknown store %q: expected %s, %s or %s", errUsage, o.store, storePostgres, storeRedis, storeMySQL)
}

func newLogger(o options, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return nil, fmt.Errorf("%w: log level: %v", errUsage, err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	if o.logFormat == "text" {
		return slog.New(slog.NewTextHandler(w, hopts)), nil
	}
	return slog.New(slog.NewJSONHandler(w, hopts)), nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, getenv, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(o, stderr)
	if err != nil {
		return err
	}
	cfg, closeStore, err := openStore(ctx, o, log)
	if err != nil {
		return err
	}
	defer closeStore()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gw := reference.NewGateway(o.gatewayURL, o.gatewayAPIKey, o.gatewayTimeout)
	gw.API, gw.OrderAt, gw.Provider = o.gatewayAPI, o.orderAt, o.gatewayProvider
	srv, err := o.variant.New(reference.Config{
		Pool:             cfg.Pool,
		Store:            cfg.Store,
		Gateway:          gw,
		TTL:              o.ttl,
		TombstoneTTL:     o.tombstoneTTL,
		MaxWait:          o.maxWait,
		Lease:            o.lease,
		SweepInterval:    o.sweepInterval,
		RecoveryAfter:    o.recoveryAfter,
		GatewayKeyWindow: o.gatewayKeyWindow,
		Now:              reference.OffsetClock(o.clockOffset),
		StoreClock:       true,
		Logger:           log,
		Registry:         reg,
	})
	if err != nil {
		return err
	}
	return serve(ctx, o, srv, log, stdout)
}

// openStore opens the store --store selects: the Config fields that name
// it, and how to close it.
func openStore(ctx context.Context, o options, log *slog.Logger) (reference.Config, func(), error) {
	switch o.store {
	case storeRedis:
		client, err := openRedis(ctx, o, log)
		if err != nil {
			return reference.Config{}, nil, err
		}
		return reference.Config{Store: redisstore.New(client)}, func() { client.Close() }, nil
	case storeMySQL:
		db, err := openMySQL(ctx, o, log)
		if err != nil {
			return reference.Config{}, nil, err
		}
		return reference.Config{Store: mysqlstore.New(db)}, func() { db.Close() }, nil
	}
	pool, err := openDatabase(ctx, o, log)
	if err != nil {
		return reference.Config{}, nil, err
	}
	return reference.Config{Pool: pool}, pool.Close, nil
}

// openDatabase connects (retrying while the database starts) and migrates.
func openDatabase(ctx context.Context, o options, log *slog.Logger) (*pgxpool.Pool, error) {
	cfg, err := reference.PoolConfig(o.databaseURL)
	if err != nil {
		return nil, fmt.Errorf("%w: DATABASE_URL: %v", errUsage, err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	if err := untilReady(ctx, o, log, func(ctx context.Context) error { return reference.Migrate(ctx, pool) }); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database: %w", err)
	}
	return pool, nil
}

// openRedis connects, retrying while Redis starts.
func openRedis(ctx context.Context, o options, log *slog.Logger) (*redis.Client, error) {
	client := redis.NewClient(o.redisOptions)
	if err := untilReady(ctx, o, log, func(ctx context.Context) error { return client.Ping(ctx).Err() }); err != nil {
		client.Close()
		return nil, fmt.Errorf("redis: %w", err)
	}
	return client, nil
}

// openMySQL connects (retrying while MySQL starts) and creates the table.
func openMySQL(ctx context.Context, o options, log *slog.Logger) (*sql.DB, error) {
	db, err := mysqlstore.Open(o.mysqlDSN, log)
	if err != nil {
		return nil, fmt.Errorf("%w: MYSQL_DSN: %v", errUsage, err)
	}
	if err := untilReady(ctx, o, log, func(ctx context.Context) error { return mysqlstore.Migrate(ctx, db) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("mysql: %w", err)
	}
	return db, nil
}

// untilReady retries try (each attempt bounded to 5s) every 250ms until it
// succeeds, ctx ends or --start-timeout passes.
func untilReady(ctx context.Context, o options, log *slog.Logger, try func(context.Context) error) error {
	deadline := time.Now().Add(o.startTimeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := try(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		log.Warn("store not ready; retrying", "store", o.store, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// serve listens, announces readiness, and on ctx's end shuts down in order:
// stop accepting and finish in-flight requests (their waiters still need the
// listener), then stop the listener and sweeper.
func serve(ctx context.Context, o options, srv zoo.Server, log *slog.Logger, stdout io.Writer) error {
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	runDone := make(chan struct{})
	go func() { srv.Run(runCtx); close(runDone) }()
	select {
	case <-srv.Ready():
	case <-time.After(5 * time.Second):
		log.Warn("notification listener not ready; serving anyway (waiters fall back to timers)")
	case <-ctx.Done():
	}

	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "reference-server listening on http://%s\n", ln.Addr())
	log.Info("listening", "addr", ln.Addr().String(), "variant", o.variant.Name)

	select {
	case err = <-serveErr:
	case <-ctx.Done():
		log.Info("shutting down")
		grace := o.gatewayTimeout + o.maxWait + 5*time.Second
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		err = hs.Shutdown(sctx)
		cancel()
	}
	stopRun()
	<-runDone
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
