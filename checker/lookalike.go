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
		for i, a := range group {
			for _, b := range group[i+1:] {
				if a.ops[0].key == b.ops[0].key {
					continue
				}
				pairs++
				if chargedOnce(a, b) {
					charged++
				}
			}
		}
	}
	return pairs, charged
}

// chargedOnce reports whether a and b were each charged exactly once, by
// two different charges.
func chargedOnce(a, b *order) bool {
	ca, cb := a.succeeded(), b.succeeded()
	return len(ca) == 1 && len(cb) == 1 && ca[0].ID != cb[0].ID
}
