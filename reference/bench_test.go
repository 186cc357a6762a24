package reference_test

import (
	"context"
	"errors"
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

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/internal/pgtest"
	"github.com/idemcheck/idemcheck/internal/procstat"
	"github.com/idemcheck/idemcheck/reference"
)

// benchClients is the number of concurrent HTTP clients, fixed (not scaled
// with GOMAXPROCS) so figures compare across machines.
const benchClients = 16

// BenchmarkReference measures the reference server over loopback HTTP with
// 16 concurrent clients, each figure against anchors measured in the same
// run, in alternating turns (alternate: the machine is shared and noisy).
// The anchors are servers with no idempotency (passMode): the same HTTP
// server and parsing, the same gateway, and only their own writes. Each
// ratio is given of rates (vs_*) and of CPU per op (cpu_vs_*: this
// process's and the database's, which the other load does not change):
//
//	new_keys        charges/s for fresh keys (claim + gateway + finish);
//	                vs_two_writes, against the pass-through that writes the
//	                intent before the gateway call and the result after it
//	                (goal ≥ 0.85); as context, vs_one_write (one write of the
//	                result) and vs_pgbench = ÷ charge_tps, pgbench running
//	                the reference's own claim and finish statements
//	store_only      claim + finish per key, no HTTP, no gateway
//	replays         replays/s of finished keys; vs_stored_answer, against
//	                the pass-through that reads the key's stored answer and
//	                sends it back (goal ≥ 0.8); as context, vs_pgbench =
//	                ÷ select_tps, pgbench's primary-key SELECT
//	replays_pinged  replays on a pool that pings every lend
//	waiter_delay    p50/p99 of how long after its owner's answer a waiting
//	                duplicate gets its own (goal p99 ≤ 10 ms)
//
// Run: go test ./reference -run '^$' -bench BenchmarkReference -benchtime 5s
func BenchmarkReference(b *testing.B) {
	e := newEnv(b, envOptions{})
	url := e.replicas[0].url
	client := &http.Client{Timeout: time.Minute, Transport: newTransport()}
	insertTPS := pgbenchInsertTPS(b, e.dbURL)
	limits := pgbenchChargeLimits(b, e.dbURL)
	pass := func(mode passMode) string {
		return e.startReplica(envOptions{hooks: passThrough(b, e.dbURL, e.gw.URL, mode)}).url
	}
	one, two, storedURL := pass(oneWrite), pass(twoWrites), pass(storedAnswer)

	meter := newCPUMeter(b, e.db)
	// newKey charges a fresh key at url.
	newKey := func(b *testing.B, url string) func(i int64) {
		tenant := uniq("sk_bench")
		return func(i int64) {
			order := fmt.Sprintf("ord_new_%s_%d", tenant, i)
			r, err := post(client, url, charge{tenant: tenant, key: order, body: chargeBody(order, 100)})
			if err != nil || r.status != http.StatusCreated {
				b.Fatalf("new key at %s: %v %s", url, err, r)
			}
		}
	}
	b.Run("new_keys", func(b *testing.B) {
		f := meter.alternate(b, newKey(b, url), newKey(b, two), newKey(b, one))
		ref, twoW, oneW := f[0], f[1], f[2]
		ref.report(b, "charges/s")
		b.ReportMetric(twoW.perSec, "two_writes_charges/s")
		b.ReportMetric(oneW.perSec, "one_write_charges/s")
		ref.against(b, "two_writes", twoW)
		ref.against(b, "one_write", oneW)
		b.ReportMetric(insertTPS, "insert_tps")
		b.ReportMetric(ref.perSec/insertTPS, "ratio")
		b.ReportMetric(limits.charge, "charge_tps")
		b.ReportMetric(ref.perSec/limits.charge, "vs_pgbench")
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

	// replay replays one of 512 keys it finished first at url.
	replay := func(b *testing.B, url string) func(i int64) {
		tenant := uniq("sk_bench")
		const keys = 512
		seed := func(i int64) charge {
			k := fmt.Sprintf("ord_replay_%s_%d", tenant, i%keys)
			return charge{tenant: tenant, key: k, body: chargeBody(k, 100)}
		}
		for i := range int64(keys) {
			if r, err := post(client, url, seed(i)); err != nil || r.status != http.StatusCreated {
				b.Fatalf("seed at %s: %v %s", url, err, r)
			}
		}
		return func(i int64) {
			r, err := post(client, url, seed(i))
			if err != nil || r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "true" {
				b.Fatalf("replay at %s: %v %s", url, err, r)
			}
		}
	}
	b.Run("replays", func(b *testing.B) {
		f := meter.alternate(b, replay(b, url), replay(b, storedURL))
		ref, stored := f[0], f[1]
		ref.report(b, "replays/s")
		b.ReportMetric(stored.perSec, "stored_answer_replays/s")
		ref.against(b, "stored_answer", stored)
		b.ReportMetric(limits.selects, "select_tps")
		b.ReportMetric(ref.perSec/limits.selects, "vs_pgbench")
	})
	// What reference.PoolConfig's look at the socket saves: the same
	// replays on a replica whose pool pings every connection before it
	// lends it (the reference's rule until the look).
	pinged := e.startReplica(envOptions{config: func(c *reference.Config) {
		c.Pool = openPoolWith(b, e.dbURL, func(cfg *pgxpool.Config) {
			cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return true }
		})
	}})
	b.Run("replays_pinged", func(b *testing.B) {
		op := replay(b, pinged.url)
		meter.measure(b, "replays/s", op)
	})

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

// cpuMeter reads the CPU time used by this process (the clients, the
// servers, the gateway simulator) and by the database server (the
// postmaster and its backends, live or reaped), from /proc: a figure's
// cost per op as CPU, which the other load of a shared machine does not
// change, where it changes throughput. Where /proc cannot be read, or the
// database is not local, the missing share reads as zero.
type cpuMeter struct{ postmaster int }

func newCPUMeter(b *testing.B, db *pgxpool.Pool) *cpuMeter {
	var backend int
	if err := db.QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	st, _ := procstat.Read(backend)
	return &cpuMeter{postmaster: st.PPID}
}

// cpuUse is CPU time used so far.
type cpuUse struct{ self, db time.Duration }

func (m *cpuMeter) now() cpuUse {
	u := cpuUse{self: procstat.Self()}
	if m.postmaster != 0 {
		u.db = procstat.Children(m.postmaster)
	}
	return u
}

// measure runs op b.N times over benchClients clients and reports its
// rate (per second, in unit) and the CPU each op used.
func (m *cpuMeter) measure(b *testing.B, unit string, op func(i int64)) {
	start := m.now()
	runClients(b, op)
	used := m.now().minus(start)
	figureOf(b.N, b.Elapsed(), used).report(b, unit)
}

// Alternation: a figure and its anchors run in turns of turn, rounds
// times, the order reversed every other round, so that the machine's
// other load, which changes within seconds, weighs on each alike.
const (
	turn   = 500 * time.Millisecond
	rounds = 6
)

// alternate measures ops (a figure, then its anchors) in alternating
// turns over benchClients clients each. It runs once whatever b.N: its
// ns/op is the whole alternation.
func (m *cpuMeter) alternate(b *testing.B, ops ...func(i int64)) []figure {
	n := make([]int64, len(ops))
	wall := make([]time.Duration, len(ops))
	used := make([]cpuUse, len(ops))
	next := make([]atomic.Int64, len(ops))
	b.ResetTimer()
	for round := range rounds {
		for j := range ops {
			k := j
			if round%2 == 1 {
				k = len(ops) - 1 - j
			}
			start, began := m.now(), time.Now()
			n[k] += runFor(turn, &next[k], ops[k])
			wall[k] += time.Since(began)
			used[k] = used[k].plus(m.now().minus(start))
		}
	}
	b.StopTimer()
	figs := make([]figure, len(ops))
	for k := range ops {
		figs[k] = figureOf(int(n[k]), wall[k], used[k])
	}
	return figs
}

// runFor runs op over benchClients clients until d has passed, numbering
// the calls from next on, and returns how many it ran.
func runFor(d time.Duration, next *atomic.Int64, op func(i int64)) int64 {
	first := next.Load()
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range benchClients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				op(next.Add(1) - 1)
			}
		})
	}
	wg.Wait()
	return next.Load() - first
}

func (u cpuUse) minus(o cpuUse) cpuUse { return cpuUse{self: u.self - o.self, db: u.db - o.db} }
func (u cpuUse) plus(o cpuUse) cpuUse  { return cpuUse{self: u.self + o.self, db: u.db + o.db} }

// figure is a rate and the CPU per op it cost, this process's (self) and
// the database's, in ms.
type figure struct{ perSec, self, db float64 }

func figureOf(n int, wall time.Duration, used cpuUse) figure {
	return figure{perSec: float64(n) / wall.Seconds(), self: ms(used.self) / float64(n), db: ms(used.db) / float64(n)}
}

func (f figure) cpu() float64 { return f.self + f.db }

// report reports f's rate (in unit) and its CPU per op.
func (f figure) report(b *testing.B, unit string) {
	b.ReportMetric(f.perSec, unit)
	b.ReportMetric(f.self, "go_cpu_ms/op")
	b.ReportMetric(f.db, "db_cpu_ms/op")
}

// against reports f's ratios to an anchor: of rates (vs_NAME, the goal's
// figure) and of CPU per op (cpu_vs_NAME, the anchor's over f's: what
// the ratio of rates is when CPU is what bounds both), and the anchor's
// CPU per op.
func (f figure) against(b *testing.B, name string, anchor figure) {
	b.ReportMetric(f.perSec/anchor.perSec, "vs_"+name)
	b.ReportMetric(anchor.cpu(), name+"_cpu_ms/op")
	b.ReportMetric(anchor.cpu()/f.cpu(), "cpu_vs_"+name)
}

// passMode is what a pass-through server, one with no idempotency logic,
// writes per charge: the anchors the reference's cost is measured against.
type passMode int

const (
	// oneWrite: the order's result, one INSERT after the gateway call
	// (the order write every payment service makes). Context: the
	// protocol needs two durable writes, so no correct server gets near.
	oneWrite passMode = iota
	// twoWrites: the same two durable writes the protocol makes, the
	// intent before the gateway call (an INSERT) and the result after it
	// (an UPDATE of that row), with no claim, fingerprint check, lease or
	// wake-up: the anchor for new keys.
	twoWrites
	// storedAnswer: twoWrites, and a request whose key already has a
	// result gets it back (one primary-key SELECT, then the answer): the
	// anchor for replays. A new key pays the SELECT too.
	storedAnswer
)

// passThrough is the Charge hook of a server with no idempotency: each
// request is charged under a fresh gateway request id, what mode writes
// is written to PostgreSQL, and the result answered.
func passThrough(b *testing.B, dbURL, gatewayURL string, mode passMode) func(*reference.Server) reference.Hooks {
	db := openPool(b, dbURL)
	if _, err := db.Exec(context.Background(), `CREATE TABLE IF NOT EXISTS passthrough_orders (
			order_id text PRIMARY KEY, charge_id text, status smallint NOT NULL, body bytea NOT NULL, created_at timestamptz NOT NULL);
		CREATE TABLE IF NOT EXISTS passthrough_charges (
			tenant text NOT NULL, idem_key text NOT NULL, request_id text NOT NULL, amount bigint NOT NULL, currency text NOT NULL,
			order_id text NOT NULL, response_status smallint, response_body bytea, charge_id text,
			created_at timestamptz NOT NULL, finished_at timestamptz, PRIMARY KEY (tenant, idem_key))`); err != nil {
		b.Fatal(err)
	}
	gw := reference.NewGateway(gatewayURL, "sk_test_reference", 10*time.Second)
	return func(srv *reference.Server) reference.Hooks {
		return reference.Hooks{Charge: func(ctx context.Context, req *reference.ChargeRequest) reference.Answer {
			if mode == storedAnswer {
				var res reference.Result
				err := db.QueryRow(ctx, `SELECT response_status, response_body FROM passthrough_charges
					WHERE tenant = $1 AND idem_key = $2 AND response_status IS NOT NULL`, req.Tenant, req.Key).Scan(&res.Status, &res.Body)
				if err == nil {
					return reference.Answer{Result: &res, Replayed: true}
				}
				if !errors.Is(err, pgx.ErrNoRows) {
					return srv.Unavailable(err)
				}
			}
			id := reference.NewID("req_")
			if mode != oneWrite {
				if _, err := db.Exec(ctx, `INSERT INTO passthrough_charges (tenant, idem_key, request_id, amount, currency, order_id, created_at)
					VALUES ($1, $2, $3, $4, $5, $6, now())`, req.Tenant, req.Key, id, req.Params.Amount, req.Params.Currency, req.Params.OrderID); err != nil {
					return srv.Unavailable(err)
				}
			}
			out := gw.Charge(ctx, reference.GatewayRequest{RequestID: id, ChargeParams: req.Params})
			if !out.Definitive() {
				return reference.UnknownOutcome(out)
			}
			res, _ := reference.ResultFor(out, req.Params)
			var err error
			if mode == oneWrite {
				_, err = db.Exec(ctx, `INSERT INTO passthrough_orders (order_id, charge_id, status, body, created_at)
					VALUES ($1, NULLIF($2, ''), $3, $4, now())`, req.Params.OrderID, res.ChargeID, int16(res.Status), res.Body)
			} else {
				_, err = db.Exec(ctx, `UPDATE passthrough_charges SET response_status = $3, response_body = $4, charge_id = NULLIF($5, ''),
					finished_at = now() WHERE tenant = $1 AND idem_key = $2`, req.Tenant, req.Key, int16(res.Status), res.Body, res.ChargeID)
			}
			if err != nil {
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
