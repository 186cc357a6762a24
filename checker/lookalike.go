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
	pairs = choose2(len(group)) - sameKey(group, func(*order) string { return "" })
	var once []*order
	for _, o := range group {
		if len(o.succeeded()) == 1 {
			once = append(once, o)
		}
	}
	charge := func(o *order) string { return o.succeeded()[0].ID }
	// Pairs of once-charged orders under different keys and different
	// charges: all, less those sharing a key or a charge, plus those
	// sharing both (counted twice).
	charged = choose2(len(once)) - sameKey(once, func(*order) string { return "" }) - sameOf(once, charge) + sameKey(once, charge)
	return pairs, charged
}

// sameKey counts the pairs of orders whose first request has the same
// key and the same also(order).
func sameKey(orders []*order, also func(*order) string) int {
	return sameOf(orders, func(o *order) string { return o.ops[0].key + "\x00" + also(o) })
}

// sameOf counts the pairs of orders with the same of(order).
func sameOf(orders []*order, of func(*order) string) int {
	n := map[string]int{}
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
