package reference_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/internal/pgtest"
	"github.com/idemcheck/idemcheck/reference"
)

// benchClients is the number of concurrent HTTP clients, fixed (not scaled
// with GOMAXPROCS) so figures compare across machines.
const benchClients = 16

// BenchmarkReference measures the reference server over loopback HTTP with
// 16 concurrent clients, each figure as a ratio to an anchor measured in
// the same run (the machine is shared and noisy):
//
//	passthrough   charges/s of the same server with no idempotency: the same
//	              HTTP server and parsing, the same gateway, and one INSERT of
//	              the order's result per charge (reference.Hooks.Charge)
//	new_keys      charges/s for fresh keys (claim + gateway + finish: two
//	              commits); vs_passthrough = ÷ passthrough (goal ≥ 0.7);
//	              vs_pgbench = ÷ charge_tps, pgbench running the reference's
//	              own claim and finish statements (goal ≥ 0.5); insert_tps
//	              (pgbench, single-row INSERTs) as before
//	replays       replays/s of finished keys (one indexed read); vs_pgbench
//	              = ÷ select_tps, pgbench's primary-key SELECT (goal ≥ 0.5)
//	waiter_delay  p50/p99 of how long after its owner's answer a waiting
//	              duplicate gets its own (goal p99 ≤ 10 ms)
//
// Run: go test ./reference -run '^$' -bench BenchmarkReference -benchtime 5s
func BenchmarkReference(b *testing.B) {
	e := newEnv(b, envOptions{})
	url := e.replicas[0].url
	client := &http.Client{Timeout: time.Minute, Transport: newTransport()}
	insertTPS := pgbenchInsertTPS(b, e.dbURL)
	limits := pgbenchChargeLimits(b, e.dbURL)
	pass := e.startReplica(envOptions{hooks: passThrough(b, e.dbURL, e.gw.URL)})
	var passPerSec float64

	b.Run("passthrough", func(b *testing.B) {
		tenant := uniq("sk_bench")
		runClients(b, func(i int64) {
			order := fmt.Sprintf("ord_pass_%s_%d", tenant, i)
			r, err := post(client, pass.url, charge{tenant: tenant, key: order, body: chargeBody(order, 100)})
			if err != nil || r.status != http.StatusCreated {
				b.Fatalf("pass-through: %v %s", err, r)
			}
		})
		passPerSec = float64(b.N) / b.Elapsed().Seconds()
		b.ReportMetric(passPerSec, "charges/s")
	})

	b.Run("new_keys", func(b *testing.B) {
		tenant := uniq("sk_bench")
		runClients(b, func(i int64) {
			order := fmt.Sprintf("ord_new_%s_%d", tenant, i)
			r, err := post(client, url, charge{tenant: tenant, key: order, body: chargeBody(order, 100)})
			if err != nil || r.status != http.StatusCreated {
				b.Fatalf("new key: %v %s", err, r)
			}
		})
		perSec := float64(b.N) / b.Elapsed().Seconds()
		b.ReportMetric(perSec, "charges/s")
		b.ReportMetric(insertTPS, "insert_tps")
		b.ReportMetric(perSec/insertTPS, "ratio")
		b.ReportMetric(limits.charge, "charge_tps")
		b.ReportMetric(perSec/limits.charge, "vs_pgbench")
		if passPerSec > 0 {
			b.ReportMetric(perSec/passPerSec, "vs_passthrough")
		}
	})

	// The database's share alone: claim + finish (two commits) per key,
	// no HTTP, no gateway.
	b.Run("store_only", func(b *testing.B) {
		store := e.replicas[0].srv.Store()
		tenant := reference.TenantID(uniq("sk_bench"))
		canonical := []byte(`{"amount":100,"currency":"usd","order_id":"o"}`)
		fp := reference.Fingerprint("POST", "/v1/charges", canonical)
		params := reference.ChargeParams{Amount: 100, Currency: "usd", OrderID: "o"}
		res := reference.Result{Status: 201, Body: []byte(`{"id":"ch_1"}`), ChargeID: "ch_1"}
		ctx := context.Background()
		runClients(b, func(i int64) {
			key := fmt.Sprintf("k%d", i)
			c := reference.Claim{Tenant: tenant, KeyHash: reference.KeyHash(key), Key: key, Fingerprint: fp,
				RequestID: "req_" + key, Params: params, Owner: "bench", Now: time.Now(), Lease: time.Minute,
				TTL: time.Hour, Forget: time.Hour}
			if ok, _, err := store.Claim(ctx, c); !ok || err != nil {
				b.Fatalf("claim: %v %v", ok, err)
			}
			if ok, err := store.Finish(ctx, tenant, c.KeyHash, c.RequestID, res, time.Now()); !ok || err != nil {
				b.Fatalf("finish: %v %v", ok, err)
			}
		})
		perSec := float64(b.N) / b.Elapsed().Seconds()
		b.ReportMetric(perSec, "keys/s")
		b.ReportMetric(perSec/insertTPS, "ratio")
	})

	replays := func(url string) func(b *testing.B) {
		return func(b *testing.B) {
			tenant := uniq("sk_bench")
			const keys = 512
			seed := func(i int64) charge {
				k := fmt.Sprintf("ord_replay_%s_%d", tenant, i%keys)
				return charge{tenant: tenant, key: k, body: chargeBody(k, 100)}
			}
			for i := range int64(keys) {
				if r, err := post(client, url, seed(i)); err != nil || r.status != http.StatusCreated {
					b.Fatalf("seed: %v %s", err, r)
				}
			}
			runClients(b, func(i int64) {
				r, err := post(client, url, seed(i))
				if err != nil || r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "true" {
					b.Fatalf("replay: %v %s", err, r)
				}
			})
			perSec := float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(perSec, "replays/s")
			b.ReportMetric(limits.selects, "select_tps")
			b.ReportMetric(perSec/limits.selects, "vs_pgbench")
		}
	}
	b.Run("replays", replays(url))
	// What reference.PoolConfig's look at the socket saves: the same
	// replays on a replica whose pool pings every connection before it
	// lends it (the reference's rule until the look).
	pinged := e.startReplica(envOptions{config: func(c *reference.Config) {
		c.Pool = openPoolWith(b, e.dbURL, func(cfg *pgxpool.Config) {
			cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return true }
		})
	}})
	b.Run("replays_pinged", replays(pinged.url))

	b.Run("waiter_delay", func(b *testing.B) {
		tenant := uniq("sk_bench")
		events, cancel := e.sim.Subscribe()
		defer cancel()
		started := newStartedSet(events)
		var mu sync.Mutex
		var delays []time.Duration
		b.ResetTimer()
		runClientsN(b, 8, func(i int64) {
			order := fmt.Sprintf("ord_wait_%s_%d", tenant, i)
			c := charge{tenant: tenant, key: order, body: chargeBody(order, 100)}
			e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Latency, Match: gatewaysim.Match{OrderID: order},
				Latency: 30 * time.Millisecond, Times: 1})
			ownerDone := make(chan time.Time, 1)
			go func() {
				if r, err := post(client, url, c); err != nil || r.status != http.StatusCreated {
					b.Errorf("owner: %v %s", err, r)
				}
				ownerDone <- time.Now()
			}()
			started.wait(order) // the owner's gateway call is in flight: its claim exists
			r, err := post(client, url, c)
			waiterAt := time.Now()
			if err != nil || r.status != http.StatusCreated {
				b.Errorf("waiter: %v %s", err, r)
			}
			d := max(waiterAt.Sub(<-ownerDone), 0)
			mu.Lock()
			delays = append(delays, d)
			mu.Unlock()
		})
		slices.Sort(delays)
		b.ReportMetric(ms(percentile(delays, 0.50)), "p50_ms")
		b.ReportMetric(ms(percentile(delays, 0.99)), "p99_ms")
	})
}

// runClients runs op b.N times spread over benchClients goroutines.
func runClients(b *testing.B, op func(i int64)) { runClientsN(b, benchClients, op) }

func runClientsN(b *testing.B, clients int, op func(i int64)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range clients {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				op(i)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
}

// startedSet records orders whose latency fault fired (the gateway holds
// the owner's call), from one event subscription shared by all workers.
type startedSet struct {
	mu   sync.Mutex
	cond *sync.Cond
	seen map[string]bool
}

func newStartedSet(events <-chan gatewaysim.Event) *startedSet {
	s := &startedSet{seen: map[string]bool{}}
	s.cond = sync.NewCond(&s.mu)
	go func() {
		for ev := range events {
			if ev.Type == gatewaysim.EventFault && ev.Fault == gatewaysim.Latency {
				s.mu.Lock()
				s.seen[ev.OrderID] = true
				s.cond.Broadcast()
				s.mu.Unlock()
			}
		}
	}()
	return s
}

func (s *startedSet) wait(order string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.seen[order] {
		s.cond.Wait()
	}
	delete(s.seen, order)
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(float64(len(sorted))*p), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pgbenchInsertTPS runs pgbench (16 clients, 5 s) on a one-table
// single-row INSERT script against the benchmark's database: the most
// commits per second this cluster can do, the physical limit for claims.
func pgbenchInsertTPS(b *testing.B, dbURL string) float64 {
	b.Helper()
	db := openPool(b, dbURL)
	if _, err := db.Exec(context.Background(), `CREATE TABLE IF NOT EXISTS pgbench_insert_limit (
		id bigserial PRIMARY KEY, payload text NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	return pgbenchTPS(b, dbURL, "insert.sql", "INSERT INTO pgbench_insert_limit (payload) VALUES ('x');\n")
}

// findPgbench uses the shared test cluster's binaries, or with DATABASE_URL
// set, PG_BIN, the newest /usr/lib/postgresql/*/bin, or PATH.
func findPgbench(b *testing.B) string {
	if os.Getenv("DATABASE_URL") == "" {
		return filepath.Join(pgtest.Cluster(b).BinDir(), "pgbench")
	}
	dirs := []string{os.Getenv("PG_BIN")}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(found)))
	for _, d := range append(dirs, found...) {
		if p := filepath.Join(d, "pgbench"); d != "" && fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath("pgbench")
	if err != nil {
		b.Skip("pgbench not found")
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// passThrough is the Charge hook of a server with no idempotency at all:
// each request is charged under a fresh gateway key and its result written
// to PostgreSQL in one INSERT (the order write every payment service
// makes), then answered. The anchor for what idempotency costs.
func passThrough(b *testing.B, dbURL, gatewayURL string) func(*reference.Server) reference.Hooks {
	db := openPool(b, dbURL)
	if _, err := db.Exec(context.Background(), `CREATE TABLE IF NOT EXISTS passthrough_orders (
		order_id text PRIMARY KEY, charge_id text, status smallint NOT NULL, body bytea NOT NULL, created_at timestamptz NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	gw := reference.NewGateway(gatewayURL, "sk_test_reference", 10*time.Second)
	return func(srv *reference.Server) reference.Hooks {
		return reference.Hooks{Charge: func(ctx context.Context, req *reference.ChargeRequest) reference.Answer {
			out := gw.Charge(ctx, reference.GatewayRequest{RequestID: reference.NewID("req_"), ChargeParams: req.Params})
			if !out.Definitive() {
				return reference.UnknownOutcome(out)
			}
			res, _ := reference.ResultFor(out, req.Params)
			if _, err := db.Exec(ctx, `INSERT INTO passthrough_orders (order_id, charge_id, status, body, created_at)
				VALUES ($1, NULLIF($2, ''), $3, $4, now())`, req.Params.OrderID, res.ChargeID, int16(res.Status), res.Body); err != nil {
				return srv.Unavailable(err)
			}
			return reference.Answer{Result: &res}
		}}
	}
}

// chargeLimits are PostgreSQL's own limits, on the benchmark's cluster, for
// the statements the reference runs: a charge's claim and finish (two
// commits, as the reference makes them) and a replay's primary-key read.
type chargeLimits struct{ charge, selects float64 }

// pgbenchChargeLimits runs pgbench (16 clients, 5 s each) with the
// reference's claim INSERT … ON CONFLICT DO NOTHING and its finishing
// UPDATE on a copy of idempotency_keys, then with a primary-key SELECT of
// one of 512 finished rows.
func pgbenchChargeLimits(b *testing.B, dbURL string) chargeLimits {
	b.Helper()
	ctx := context.Background()
	db := openPool(b, dbURL)
	if _, err := db.Exec(ctx, `DROP TABLE IF EXISTS pgbench_keys;
		CREATE TABLE pgbench_keys (LIKE idempotency_keys INCLUDING ALL);
		INSERT INTO pgbench_keys (tenant, key_hash, fingerprint, state, request_id, lease_until, created_at, expires_at, forget_at,
			response_status, response_body, charge_id)
		SELECT 'replay', int8send(g), '\x00', 'succeeded', 'req_' || g, now(), now(), now() + interval '1 hour', now() + interval '1 day',
			201, '{"id":"ch_1","status":"succeeded"}', 'ch_' || g FROM generate_series(1, 512) g`); err != nil {
		b.Fatal(err)
	}
	claim := `\set k random(1, 9000000000000000000)
INSERT INTO pgbench_keys (tenant, key_hash, idem_key, fingerprint, state, request_id, amount, currency, order_id, description, lease_owner, lease_until, created_at, expires_at, forget_at) VALUES ('bench', int8send(:k), 'key_' || :k, '\x0123456789abcdef0123456789abcdef', 'in_progress', 'req_' || :k, 100, 'usd', 'ord_' || :k, NULL, 'bench', now() + interval '2 seconds', now(), now() + interval '1 hour', now() + interval '1 day') ON CONFLICT (tenant, key_hash) DO NOTHING RETURNING 1;
UPDATE pgbench_keys SET state = 'succeeded', response_status = 201, response_body = '{"id":"ch_1","status":"succeeded","amount":100}', charge_id = 'ch_' || :k, finished_at = now(), lease_owner = NULL WHERE tenant = 'bench' AND key_hash = int8send(:k) AND request_id = 'req_' || :k AND state IN ('in_progress', 'needs_recovery');
`
	read := `\set k random(1, 512)
SELECT state, response_status, response_body, charge_id FROM pgbench_keys WHERE tenant = 'replay' AND key_hash = int8send(:k::bigint);
`
	return chargeLimits{charge: pgbenchTPS(b, dbURL, "charge.sql", claim), selects: pgbenchTPS(b, dbURL, "select.sql", read)}
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbenchTPS runs script under pgbench (16 clients, 2 threads, 5 s, the
// extended protocol with prepared statements, as pgx sends them) and
// returns its transactions per second.
func pgbenchTPS(b *testing.B, dbURL, name, script string) float64 {
	b.Helper()
	path := filepath.Join(b.TempDir(), name)
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(findPgbench(b), "-n", "-M", "prepared", "-c", strconv.Itoa(benchClients), "-j", "2", "-T", "5",
		"-f", path, dbURL).CombinedOutput()
	if err != nil {
		b.Fatalf("pgbench %s: %v\n%s", name, err, out)
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		b.Fatalf("pgbench %s: no tps in output:\n%s", name, out)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	return tps
}
