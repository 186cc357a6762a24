package families

import (
	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// mutation is one way key-reuse sends its key again: a different request
// (must be refused) or the same request written differently (must be
// recognised). It changes the first request's send.
type mutation struct {
	name  string
	apply func(s *scenarios.Send)
}

// Mutations lists what key-reuse can send under a reused key for tg, in a
// fixed order (a generator must be a function of its seed). Different
// requests change one of the payment's values, wherever the target's
// request shape puts it (an order id in the path makes another path), or
// one static field of the body template, the first text one
// (different:static) and the first nested one of another kind
// (different:nested), when the template has them. Equal requests are
// the body written in every way the target's encoding allows
// (target.Protocol.Writings): key order and whitespace for JSON, and
// number spelling when the template has a whole number of its own;
// parameter order for a form body.
func Mutations(tg *target.Target) []string {
	var names []string
	for _, m := range mutationsFor(tg) {
		names = append(names, m.name)
	}
	return names
}

func mutationsFor(tg *target.Target) []mutation {
	muts := []mutation{
		{"different:amount", func(s *scenarios.Send) { s.Amount = s.Amount*10 + 1 }},
		{"different:currency", func(s *scenarios.Send) { s.Currency = strings.ToUpper(s.Currency) }},
		{"different:order", func(s *scenarios.Send) { s.Order += "_b" }},
	}
	text, nested := staticEdits(tg.Protocol.Template().StaticFields())
	if text != "" {
		muts = append(muts, mutation{"different:static", func(s *scenarios.Send) { s.Edit = text }})
	}
	if nested != "" {
		muts = append(muts, mutation{"different:nested", func(s *scenarios.Send) { s.Edit = nested }})
	}
	for _, style := range tg.Protocol.Writings() {
		muts = append(muts, mutation{"equal:" + style, func(s *scenarios.Send) { s.Writing = style }})
	}
	return muts
}

// staticEdits picks the static fields key-reuse changes: the first text
// one, and the first nested one that is not text.
func staticEdits(fields []target.StaticField) (text, nested string) {
	for _, f := range fields {
		switch {
		case f.Text && text == "":
			text = f.Pointer
		case !f.Text && f.Depth >= 2 && nested == "":
			nested = f.Pointer
		}
	}
	return text, nested
}

func init() {
	register(Family{Name: "key-reuse", Level: "L3", Rank: 20, Gen: genKeyReuse,
		Doc: "same key with a different request (each payment value, a static field) and with equal bodies written differently, after a charge or a decline"})
}

func genKeyReuse(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario {
	var b builder
	amount := drawAmount(t)
	tenant := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant")
	first := scenarios.Send{ID: "first", Replica: -1, Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Currency: "usd", Purpose: "first"}
	// A reused key after a decline must be refused or replayed like one
	// after a charge: the decline is the stored answer.
	declined := drawDecline(t)
	if declined {
		b.fault(declineFault("o0"))
	}
	b.send(first)
	if declined {
		b.heal("decline_o0")
	}
	// One key and a list of reuses: keys are independent partitions, so
	// more keys add nothing a longer list does not, and a list is what
	// rapid shrinks best (it deletes elements).
	muts := map[string]mutation{}
	for _, m := range mutationsFor(tg) {
		muts[m.name] = m
	}
	picks := rapid.SliceOfN(rapid.SampledFrom(Mutations(tg)), 1, 5).Draw(t, "mutations")
	for i, name := range picks {
		s := first
		s.ID, s.Client, s.Purpose = fmt.Sprintf("m%d", i), i+1, name
		s.Replica = rapid.IntRange(0, replicas-1).Draw(t, "replica")
		muts[name].apply(&s)
		b.send(s)
	}
	return b.scenario("key-reuse")
}
