package checker

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/history"
)

// m5 judges M5 tenant isolation: one tenant's key never returns another
// tenant's result. A 2xx is a leak when the charge it names (by the
// ledger's order, or by the order in the response) belongs to orders only
// other tenants sent, or when the same charge id is returned to two
// tenants. It is exercised only when two tenants used the same key string:
// without that, nothing tempted the server to mix tenants up.
func (ix *index) m5() CheckResult {
	c := newCheck("M5")
	owners := ix.orderTenants()
	reported := map[int]bool{}
	at := make(map[string]int, len(ix.charges)) // a charge id's place in got
	var got []received
	for _, o := range ix.ops {
		if o.Outcome != history.OK || o.ChargeID == "" {
			continue
		}
		if why := ix.leak(o, owners); why != "" {
			v := onOp(o, "%s", why)
			v.Charges = []string{o.ChargeID}
			c.flag(Failed, v)
			reported[o.ID] = true
		}
		if i, ok := at[o.ChargeID]; ok {
			got[i].add(o)
		} else {
			at[o.ChargeID] = len(got)
			got = append(got, received{first: o})
		}
	}
	for _, r := range got {
		if len(r.more) == 0 {
			continue // one tenant got the charge
		}
		if rs := append([]*opInfo{r.first}, r.more...); !anyReported(rs, reported) {
			c.flag(Failed, shared(r.first.ChargeID, rs))
		}
	}
	c.Exercised = c.Exercised || ix.cov.CrossTenantKeys > 0
	c.Note = ix.m5Note()
	return c
}

func (ix *index) m5Note() string {
	if ix.cov.CrossTenantKeys == 0 {
		return fmt.Sprintf("not exercised: %d tenant(s), no key used by two tenants", ix.cov.Tenants)
	}
	return fmt.Sprintf("judged %d tenants; %d key(s) used by more than one tenant", ix.cov.Tenants, ix.cov.CrossTenantKeys)
}

// orderTenants maps every order to the tenants that sent it, in the
// order of their first requests. An order one tenant sent shares that
// tenant's one-element list with the tenant's other such orders: the
// lists are only read.
func (ix *index) orderTenants() map[string][]string {
	m := make(map[string][]string, len(ix.orders))
	alone := map[string][]string{}
	for _, ord := range ix.orders {
		t := ord.ops[0].Tenant
		if !slices.ContainsFunc(ord.ops, func(o *opInfo) bool { return o.Tenant != t }) {
			if alone[t] == nil {
				alone[t] = []string{t}
			}
			m[ord.id] = alone[t]
			continue
		}
		var ts []string
		for _, o := range ord.ops {
			if !slices.Contains(ts, o.Tenant) {
				ts = append(ts, o.Tenant)
			}
		}
		m[ord.id] = ts
	}
	return m
}

// leak returns why o's 2xx is another tenant's result, or "".
func (ix *index) leak(o *opInfo, owners map[string][]string) string {
	orders := []string{o.RespOrder}
	if ch := ix.charges[o.ChargeID]; ch != nil {
		orders = []string{ch.Order, o.RespOrder}
	}
	for _, ord := range orders {
		ts := owners[ord]
		if ord != "" && len(ts) > 0 && !slices.Contains(ts, o.Tenant) {
			return fmt.Sprintf("tenant %q got charge %s for order %s, which only tenant(s) %s sent",
				o.Tenant, o.ChargeID, ord, strings.Join(ts, ", "))
		}
	}
	return ""
}

// received is the receivers of one charge id: its first, and the first
// of each other tenant (the charge returned to two tenants).
type received struct {
	first *opInfo
	more  []*opInfo
}

// add records o as a receiver of the charge, once per tenant.
func (r *received) add(o *opInfo) {
	if r.first.Tenant != o.Tenant && !slices.ContainsFunc(r.more, func(p *opInfo) bool { return p.Tenant == o.Tenant }) {
		r.more = append(r.more, o)
	}
}

func anyReported(rs []*opInfo, reported map[int]bool) bool {
	for _, r := range rs {
		if reported[r.ID] {
			return true
		}
	}
	return false
}

func shared(id string, rs []*opInfo) Violation {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("tenant %q (op %d)", r.Tenant, r.ID)
	}
	v := Violation{Tenant: rs[1].Tenant, Key: rs[1].key, Order: rs[1].Order, Ops: opIDs(rs...), Charges: []string{id},
		Explanation: fmt.Sprintf("charge %s was returned to %s", id, strings.Join(parts, " and "))}
	return v
}
