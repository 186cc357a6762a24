package reference

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemcheck/idemcheck/internal/pgtest"
)

// TestUnresolvedKey_LooksTheKeyUp: a statement that names its key and
// tests it is unresolved (a takeover's, here) finds it by the primary key
// in a table of finished keys, as a server's mostly is. With the partial
// index's own predicate instead (the control), the planner, counting on
// an empty index, scans all of it, however many keys it holds by then.
func TestUnresolvedKey_LooksTheKeyUp(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO idempotency_keys (tenant, key_hash, fingerprint, state, request_id,
			lease_until, created_at, expires_at, forget_at, response_status)
		SELECT 't', int8send(g), '\x00', 'succeeded', 'req_' || g, now(), now(), now() + interval '1 hour',
			now() + interval '1 day', 201
		FROM generate_series(1, 20000) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE idempotency_keys"); err != nil {
		t.Fatal(err)
	}
	plan := func(test string) string {
		rows, err := pool.Query(ctx, `EXPLAIN UPDATE idempotency_keys SET attempts = attempts + 1
			WHERE tenant = $1 AND key_hash = $2 AND `+test+` AND lease_until <= $3`, "t", KeyHash("k"), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			var line string
			rows.Scan(&line)
			lines = append(lines, line)
		}
		return strings.Join(lines, "\n")
	}
	if p := plan(unresolvedKey); !strings.Contains(p, "idempotency_keys_pkey") {
		t.Errorf("with %s, not a primary-key look-up:\n%s", unresolvedKey, p)
	}
	if p := plan("state IN ('in_progress', 'needs_recovery')"); !strings.Contains(p, "idempotency_keys_unresolved") {
		t.Errorf("control: the index's own predicate no longer draws the planner to the index:\n%s", p)
	}
}
