package reference_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

func BenchmarkScratch(b *testing.B) {
	e := newEnv(b, envOptions{})
	insertTPS := pgbenchInsertTPS(b, e.dbURL)
	b.Logf("insert tps %.0f", insertTPS)
	pool := e.db
	ctx := context.Background()
	variants := []string{"notify", "nonotify", "insertonly"}
	if os.Getenv("DROPIDX") != "" {
		pool.Exec(ctx, "DROP INDEX idempotency_keys_unresolved")
		pool.Exec(ctx, "DROP INDEX idempotency_keys_expiry")
		pool.Exec(ctx, "ALTER TABLE idempotency_keys SET (fillfactor = 70)")
	}
	for _, variant := range variants {
		b.Run(variant, func(b *testing.B) {
			store := e.replicas[0].srv.Store()
			tenant := reference.TenantID(uniq("sk_bench"))
			fp := make([]byte, 32)
			params := reference.ChargeParams{Amount: 100, Currency: "usd", OrderID: "o"}
			res := reference.Result{Status: 201, Body: []byte(`{"id":"ch_1"}`), ChargeID: "ch_1"}
			runClients(b, func(i int64) {
				key := fmt.Sprintf("k%d", i)
				if variant == "trivial_insert" {
					if _, err := pool.Exec(ctx, "INSERT INTO pgbench_insert_limit (payload) VALUES ('x')"); err != nil {
						b.Fatal(err)
					}
					return
				}
				c := reference.Claim{Tenant: tenant, KeyHash: reference.KeyHash(key), Key: key, Fingerprint: fp,
					RequestID: "req_" + key, Params: params, Owner: "bench", Now: time.Now(), Lease: time.Minute,
					TTL: time.Hour, Forget: time.Hour}
				if ok, _, err := store.Claim(ctx, c); !ok || err != nil {
					b.Fatalf("claim: %v %v", ok, err)
				}
				switch variant {
				case "notify":
					store.Finish(ctx, tenant, c.KeyHash, c.RequestID, res, time.Now())
				case "nonotify":
					_, err := pool.Exec(ctx, `UPDATE idempotency_keys SET state = $4, response_status = $5, response_body = $6,
				charge_id = NULLIF($7, ''), finished_at = $8, lease_owner = NULL
			WHERE tenant = $1 AND key_hash = $2 AND request_id = $3 AND state IN ('in_progress', 'needs_recovery')`,
						tenant, c.KeyHash, c.RequestID, "succeeded", int16(201), res.Body, res.ChargeID, time.Now())
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}
