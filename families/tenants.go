package families

import (
	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

func init() {
	register(Family{Name: "tenants", Level: "L1", Rank: 50, Gen: genTenants, Doc: "one key used by two tenants"})
}

func genTenants(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario {
	var b builder
	a := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant_a")
	o := (a + 1 + rapid.IntRange(0, len(tg.Tenants)-2).Draw(t, "tenant_b_offset")) % len(tg.Tenants)
	concurrent := rapid.Bool().Draw(t, "concurrent")
	// Merchants whose keys collide often send alike bodies too (both number
	// orders from 1): then only tenant scoping keeps B from A's charge (M5).
	amountA := drawAmount(t)
	orderB, amountB := "ob", drawAmount(t)
	if rapid.Bool().Draw(t, "same_body") {
		orderB, amountB = "oa", amountA
	}
	b.send(scenarios.Send{ID: "a", Client: 0, Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica_a"), Tenant: a, Key: "shared", Order: "oa", Amount: amountA, Async: concurrent, Purpose: "tenant-a"})
	b.send(scenarios.Send{ID: "b", Client: 1, Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica_b"), Tenant: o, Key: "shared", Order: orderB, Amount: amountB, Async: concurrent, Purpose: "tenant-b"})
	b.waitAll()
	b.send(scenarios.Send{ID: "a_retry", Client: 0, Replica: -1, Tenant: a, Key: "shared", Order: "oa", Amount: amountOf(b.steps, "oa"), Purpose: "retry"})
	return b.scenario("tenants")
}
