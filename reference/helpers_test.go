package reference_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/internal/pgtest"
	"github.com/idemcheck/idemcheck/reference"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// fakeClock is the injected clock: stored times, leases and expiry follow it.
type fakeClock = gatewaysim.ManualClock

func newFakeClock() *fakeClock {
	return gatewaysim.NewManualClock(time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC))
}

// env is one test's world: a fresh database, an in-process gateway
// simulator, and replicas of the reference server, each with its own pool
// and HTTP server (as separate processes would have).
type env struct {
	t        testing.TB
	dbURL    string
	db       *pgxpool.Pool // for assertions
	sim      *gatewaysim.Sim
	gw       *httptest.Server
	replicas []*replica
	client   *http.Client
}

type replica struct {
	srv  *reference.Server
	http *httptest.Server
	url  string
}

type envOptions struct {
	replicas int // default 1; negative: none (the test runs server processes)
	clock    *fakeClock
	config   func(*reference.Config)                 // adjusts each replica's config
	hooks    func(*reference.Server) reference.Hooks // each replica's hooks (nil: the reference's)
	provider reference.GatewayProvider               // the gateway's profile and the replicas' ("": stripe)
}

var seq atomic.Int64

// uniq returns a name no other test in this binary uses.
func uniq(prefix string) string { return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), seq.Add(1)) }

func testLogger(tb testing.TB) *slog.Logger {
	if os.Getenv("REFERENCE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func newEnv(tb testing.TB, o envOptions) *env {
	tb.Helper()
	if o.replicas == 0 {
		o.replicas = 1
	}
	o.replicas = max(o.replicas, 0)
	e := &env{t: tb, dbURL: pgtest.URL(tb)}
	e.client = &http.Client{Timeout: 60 * time.Second, Transport: newTransport()}
	simCfg := gatewaysim.Config{Seed: seq.Add(1), Provider: string(o.provider)}
	if o.clock != nil {
		simCfg.Now = o.clock.Now
	}
	e.sim = gatewaysim.New(simCfg)
	e.gw = httptest.NewServer(e.sim.Handler())
	tb.Cleanup(func() {
		e.sim.Close()
		e.gw.Close()
	})
	e.db = openPool(tb, e.dbURL)
	if err := reference.Migrate(context.Background(), e.db); err != nil {
		tb.Fatalf("migrate: %v", err)
	}
	for range o.replicas {
		e.replicas = append(e.replicas, e.startReplica(o))
	}
	return e
}

func newTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 128
	return tr
}

func openPool(tb testing.TB, url string) *pgxpool.Pool { return openPoolWith(tb, url, nil) }

// openPoolWith opens a pool configured as the server runs it, adjusted by
// adjust (nil: as it is).
func openPoolWith(tb testing.TB, url string, adjust func(*pgxpool.Config)) *pgxpool.Pool {
	tb.Helper()
	cfg, err := reference.PoolConfig(url)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.MaxConns = 24
	if adjust != nil {
		adjust(cfg)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

func (e *env) startReplica(o envOptions) *replica {
	tb := e.t
	cfg := reference.Config{
		Pool:          openPool(tb, e.dbURL),
		Gateway:       reference.NewGateway(e.gw.URL, "sk_test_reference", 10*time.Second),
		SweepInterval: -1, // tests sweep explicitly
		Logger:        testLogger(tb),
	}
	cfg.Gateway.Provider = o.provider
	if o.clock != nil {
		cfg.Now = o.clock.Now
	}
	if o.config != nil {
		o.config(&cfg)
	}
	srv, err := reference.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if o.hooks != nil {
		srv.SetHooks(o.hooks(srv))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Run(ctx); close(done) }()
	hs := httptest.NewServer(srv.Handler())
	tb.Cleanup(func() {
		hs.Close()
		cancel()
		<-done
	})
	select {
	case <-srv.Ready():
	case <-time.After(20 * time.Second):
		tb.Fatal("replica's notification listener not ready")
	}
	return &replica{srv: srv, http: hs, url: hs.URL}
}

// charge is one client request.
type charge struct {
	tenant string // bearer token; "" sends none
	key    string // Idempotency-Key value as sent; "" sends none
	body   string
	header map[string]string
}

// reply is a response, read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		tb.Fatalf("response %d is not JSON: %q", r.status, r.body)
	}
	return m
}

func (r reply) id(tb testing.TB) string {
	tb.Helper()
	id, _ := r.json(tb)["id"].(string)
	return id
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

func (e *env) post(base string, c charge) (reply, error) {
	return post(e.client, base, c)
}

func post(client *http.Client, base string, c charge) (reply, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/v1/charges", strings.NewReader(c.body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.tenant != "" {
		req.Header.Set("Authorization", "Bearer "+c.tenant)
	}
	if c.key != "" {
		req.Header.Set("Idempotency-Key", c.key)
	}
	for k, v := range c.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: body}, err
}

// mustPost posts and fails the test on a transport error.
func (e *env) mustPost(base string, c charge) reply {
	e.t.Helper()
	r, err := e.post(base, c)
	if err != nil {
		e.t.Fatalf("POST: %v", err)
	}
	return r
}

// get returns a GET's body, failing the test on error.
func (e *env) get(url string) string {
	e.t.Helper()
	resp, err := e.client.Get(url)
	if err != nil {
		e.t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// chargesFor returns the ledger entries of an order.
func (e *env) chargesFor(orderID string) []gatewaysim.Charge {
	var out []gatewaysim.Charge
	for _, c := range e.sim.Ledger() {
		if c.OrderID == orderID {
			out = append(out, c)
		}
	}
	return out
}

// waitEvent waits, bounded, for a gateway event.
func (e *env) waitEvent(pred func(gatewaysim.Event) bool) gatewaysim.Event {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ev, err := e.sim.WaitEvent(ctx, pred)
	if err != nil {
		e.t.Fatalf("gateway event: %v", err)
	}
	return ev
}

// holdOwner sends c (for order) to base with the gateway holding the
// charge it makes (charged, the answer withheld until released), and
// returns once the gateway holds it: the hold, and where the owner's
// reply arrives.
func (e *env) holdOwner(base string, c charge, order string) (gatewaysim.Event, <-chan reply) {
	e.t.Helper()
	e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.ChargeThenHang, Match: gatewaysim.Match{OrderID: order}, Times: 1})
	done := make(chan reply, 1)
	go func() { r, _ := e.post(base, c); done <- r }()
	return e.waitEvent(func(ev gatewaysim.Event) bool { return ev.Type == gatewaysim.EventHold && ev.OrderID == order }), done
}

// row reads a key's row state straight from the database.
func (e *env) row(tenant, key string) (state, requestID string, compacted bool, err error) {
	err = e.db.QueryRow(context.Background(),
		`SELECT state, request_id, compacted FROM idempotency_keys WHERE tenant = $1 AND key_hash = $2`,
		reference.TenantID(tenant), reference.KeyHash(key)).Scan(&state, &requestID, &compacted)
	return
}

// eventually polls cond, bounded: a condition wait, not a sleep.
func eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func chargeBody(orderID string, amount int) string {
	return fmt.Sprintf(`{"amount":%d,"currency":"usd","order_id":%q,"description":"test"}`, amount, orderID)
}
