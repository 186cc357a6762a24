package checker

import (
	"strings"
)

// lookAlikes counts the look-alike pairs of the history: two orders whose
// first requests came from one tenant, under two different valid keys,
// for the same amount and currency (any case), so that nothing but the
// order tells the two payments apart. charged counts the pairs of which
// each order was charged exactly once, by a charge of its own: what a
// server that names a payment by the order, not by what it looks like,
// does every time.
func (ix *index) lookAlikes() (pairs, charged int) {
	type look struct {
		tenant, currency string
		amount           int64
	}
	byLook := map[look][]*order{}
	for _, ord := range ix.orders {
		first := ord.ops[0]
		if !first.keyed || first.Tenant == "" {
			continue
		}
		k := look{first.Tenant, strings.ToLower(first.Currency), first.Amount}
		byLook[k] = append(byLook[k], ord)
	}
	for _, group := range byLook {
		p, c := countPairs(group)
		pairs += p
		charged += c
	}
	return pairs, charged
}

// countPairs counts a group's look-alike pairs (two orders under
// different keys) and those each charged once by a charge of its own,
// by counting rather than listing them: a history's cost stays linear
// even when thousands of its orders have one price.
func countPairs(group []*order) (pairs, charged int) {
	none := func(*order) string { return "" }
	pairs = choose2(len(group)) - sameKey(group, none)
	var once []*order
	for _, o := range group {
		if onlyCharge(o) != nil {
			once = append(once, o)
		}
	}
	charge := func(o *order) string { return onlyCharge(o).ID }
	// Pairs of once-charged orders under different keys and different
	// charges: all, less those sharing a key or a charge, plus those
	// sharing both (counted twice).
	charged = choose2(len(once)) - sameKey(once, none) - sameOf(once, charge) + sameKey(once, charge)
	return pairs, charged
}

// onlyCharge returns o's one succeeded charge, or nil when it has none or
// more than one (o.succeeded, without the slice).
func onlyCharge(o *order) *charge {
	var only *charge
	for _, c := range o.charges {
		if c.Succeeded() {
			if only != nil {
				return nil
			}
			only = c
		}
	}
	return only
}

// sameKey counts the pairs of orders whose first request has the same
// key and the same also(order).
func sameKey(orders []*order, also func(*order) string) int {
	type keyAnd struct{ key, also string }
	return sameOf(orders, func(o *order) keyAnd { return keyAnd{o.ops[0].key, also(o)} })
}

// sameOf counts the pairs of orders with the same of(order).
func sameOf[K comparable](orders []*order, of func(*order) K) int {
	n := make(map[K]int, len(orders))
	for _, o := range orders {
		n[of(o)]++
	}
	total := 0
	for _, k := range n {
		total += choose2(k)
	}
	return total
}

func choose2(n int) int { return n * (n - 1) / 2 }
