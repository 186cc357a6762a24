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
// 16 concurrent clients, against the physical limit of the same PostgreSQL
// cluster (pgbench, 16 clients, single-row INSERTs):
//
//	new_keys      charges/s for fresh keys (claim + gateway + finish: two commits),
//	              insert_tps (pgbench) and ratio = charges/s ÷ insert_tps (aim ≥ 0.40)
//	replays       replays/s of finished keys (one indexed read)
//	waiter_delay  p50/p99 of how long after its owner's answer a waiting
//	              duplicate gets its own (aim p99 ≤ 10 ms)
//
// Run: go test ./reference -run '^$' -bench BenchmarkReference -benchtime 5s
func BenchmarkReference(b *testing.B) {
	e := newEnv(b, envOptions{})
	url := e.replicas[0].url
	client := &http.Client{Timeout: time.Minute, Transport: newTransport()}
	insertTPS := pgbenchInsertTPS(b, e.dbURL)

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
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "replays/s")
		}
	}
	b.Run("replays", replays(url))
	// The price of reference.PoolConfig's ping before every lend: the same
	// replays on a replica whose pool pings only connections idle over a
	// second (pgx's default).
	unpinged := e.startReplica(envOptions{config: func(c *reference.Config) {
		c.Pool = openPoolWith(b, e.dbURL, func(cfg *pgxpool.Config) { cfg.ShouldPing = nil })
	}})
	b.Run("replays_unpinged", replays(unpinged.url))

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

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbenchInsertTPS runs pgbench (16 clients, 5 s) on a one-table
// single-row INSERT script against the benchmark's database: the most
// commits per second this cluster can do, the physical limit for claims.
func pgbenchInsertTPS(b *testing.B, dbURL string) float64 {
	b.Helper()
	pgbench := findPgbench(b)
	ctx := context.Background()
	db := openPool(b, dbURL)
	if _, err := db.Exec(ctx, `CREATE TABLE IF NOT EXISTS pgbench_insert_limit (
		id bigserial PRIMARY KEY, payload text NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	script := filepath.Join(b.TempDir(), "insert.sql")
	if err := os.WriteFile(script, []byte("INSERT INTO pgbench_insert_limit (payload) VALUES ('x');\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(pgbench, "-n", "-c", strconv.Itoa(benchClients), "-j", "2", "-T", "5",
		"-f", script, dbURL).CombinedOutput()
	if err != nil {
		b.Fatalf("pgbench: %v\n%s", err, out)
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		b.Fatalf("pgbench: no tps in output:\n%s", out)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	return tps
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
