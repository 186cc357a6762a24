package reference_test

import (
	"context"
	"testing"
)

func TestScratchCase(t *testing.T) {
	e := newEnv(t, envOptions{replicas: -1})
	ctx := context.Background()
	tag, err := e.db.Exec(ctx, `WITH d AS (SELECT 1 AS w UNION ALL SELECT 0) SELECT CASE WHEN w > 0 THEN pg_notify('x', 'y') END FROM d`)
	t.Log(tag, err)
	var claimed bool
	var tenant *string
	err = e.db.QueryRow(ctx, `WITH ins AS (SELECT 1 AS x WHERE false)
	  SELECT EXISTS (SELECT 1 FROM ins), k.tenant FROM (SELECT) one LEFT JOIN idempotency_keys k ON k.tenant = 'a' AND NOT EXISTS (SELECT 1 FROM ins)`).Scan(&claimed, &tenant)
	t.Log(claimed, tenant, err)
}
