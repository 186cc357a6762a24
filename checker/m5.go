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
	var ids []string
	receivers := map[string][]*opInfo{}
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
		ids, receivers[o.ChargeID] = addReceiver(ids, receivers[o.ChargeID], o)
	}
	for _, id := range ids {
		if rs := receivers[id]; len(rs) > 1 && !anyReported(rs, reported) {
			c.flag(Failed, shared(id, rs))
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

// orderTenants maps every order to the tenants that sent it.
func (ix *index) orderTenants() map[string][]string {
	m := map[string][]string{}
	for _, o := range ix.ops {
		if !slices.Contains(m[o.Order], o.Tenant) {
			m[o.Order] = append(m[o.Order], o.Tenant)
		}
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

// addReceiver records o as a receiver of its charge id, once per tenant,
// keeping ids in first-seen order.
func addReceiver(ids []string, rs []*opInfo, o *opInfo) ([]string, []*opInfo) {
	if len(rs) == 0 {
		ids = append(ids, o.ChargeID)
	}
	for _, r := range rs {
		if r.Tenant == o.Tenant {
			return ids, rs
		}
	}
	return ids, append(rs, o)
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
