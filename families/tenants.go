package families

import (
	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

func init() {
	register(Family{Name: "tenants", Level: "L1", Rank: 50, Gen: genTenants,
		Doc: "one key used by two tenants (two principals of one organisation where the target declares them), and by two clients without credentials where the target takes them"})
}

// noPrincipal is the tenant index of a send without credentials
// (scenarios.Send.Tenant).
const noPrincipal = -1

func genTenants(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario {
	var b builder
	a, o := drawPrincipals(t, tg)
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

// drawPrincipals draws who sends the shared key: two different tenants,
// or, where the target takes requests without credentials, in one
// example in three two clients without any (noPrincipal): the server
// cannot tell them apart, so they share its namespace for such requests,
// and only the body can keep one client's request from the other's
// answer (P1), as with one tenant reusing a key. Where the target
// declares principals that share an organisation, one example in three
// of the others takes two principals of one organisation: they are two
// tenants still, and one must never get the other's charge (M5).
func drawPrincipals(t *rapid.T, tg *target.Target) (a, b int) {
	if tg.Protocol.Anonymous && rapid.IntRange(0, 2).Draw(t, "without_credentials") == 0 {
		return noPrincipal, noPrincipal
	}
	if orgs := tg.SharedPrincipals(); len(orgs) > 0 && rapid.IntRange(0, 2).Draw(t, "one_organisation") == 0 {
		org := rapid.SampledFrom(orgs).Draw(t, "organisation")
		i := rapid.IntRange(0, len(org)-1).Draw(t, "principal_a")
		j := (i + 1 + rapid.IntRange(0, len(org)-2).Draw(t, "principal_b_offset")) % len(org)
		return org[i], org[j]
	}
	a = rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant_a")
	b = (a + 1 + rapid.IntRange(0, len(tg.Tenants)-2).Draw(t, "tenant_b_offset")) % len(tg.Tenants)
	return a, b
}
