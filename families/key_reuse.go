package families

import (
	"fmt"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// baseBody is the first body of key-reuse; mutations change one thing.
const baseBody = `{"amount":%d,"currency":"usd","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":2,"sku":"abc"}}}`

// Mutations of the base body: different requests (must be refused) and
// semantically equal ones (must be recognised). %d is the amount.
var mutations = map[string]string{
	"different:amount":   `{"amount":%d1,"currency":"usd","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":2,"sku":"abc"}}}`,
	"different:currency": `{"amount":%d,"currency":"USD","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":2,"sku":"abc"}}}`,
	"different:order":    `{"amount":%d,"currency":"usd","order_id":"{{order}}_b","description":"idemcheck","metadata":{"cart":{"items":2,"sku":"abc"}}}`,
	"different:metadata": `{"amount":%d,"currency":"usd","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":2,"sku":"abd"}}}`,
	"different:nested":   `{"amount":%d,"currency":"usd","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":3,"sku":"abc"}}}`,
	"equal:reordered":    `{"metadata":{"cart":{"sku":"abc","items":2}},"order_id":"{{order}}","description":"idemcheck","currency":"usd","amount":%d}`,
	"equal:whitespace":   "{ \"amount\" : %d ,\n  \"currency\":\"usd\", \"order_id\":\"{{order}}\",\t\"description\":\"idemcheck\", \"metadata\":{ \"cart\":{\"items\":2, \"sku\":\"abc\"} } }",
	"equal:exponent":     `{"amount":%d,"currency":"usd","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":2e0,"sku":"abc"}}}`,
}

// MutationNames lists the mutations in a fixed order (map order is random,
// and a generator must be a function of its seed).
var MutationNames = []string{"different:amount", "different:currency", "different:order", "different:metadata", "different:nested", "equal:reordered", "equal:whitespace", "equal:exponent"}

func init() {
	register(Family{Name: "key-reuse", Level: "L3", Rank: 20, Gen: genKeyReuse,
		Doc: "same key with a different body (each field) and with semantically equal bodies, after a charge or a decline"})
}

func genKeyReuse(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario {
	var b builder
	amount := drawAmount(t)
	tenant := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant")
	// A reused key after a decline must be refused or replayed like one
	// after a charge: the decline is the stored answer.
	if drawDecline(t) {
		b.fault(declineFault("o0"))
		b.send(scenarios.Send{ID: "first", Replica: -1, Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Body: fmt.Sprintf(baseBody, amount), Purpose: "first"})
		b.heal("decline_o0")
	} else {
		b.send(scenarios.Send{ID: "first", Replica: -1, Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Body: fmt.Sprintf(baseBody, amount), Purpose: "first"})
	}
	// One key and a list of reuses: keys are independent partitions, so
	// more keys add nothing a longer list does not, and a list is what
	// rapid shrinks best (it deletes elements).
	muts := rapid.SliceOfN(rapid.SampledFrom(MutationNames), 1, 5).Draw(t, "mutations")
	for m, mut := range muts {
		replica := rapid.IntRange(0, replicas-1).Draw(t, "replica")
		b.send(scenarios.Send{ID: fmt.Sprintf("m%d", m), Client: m + 1, Replica: replica, Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Body: fmt.Sprintf(mutations[mut], amount), Purpose: mut})
	}
	return b.scenario("key-reuse")
}
