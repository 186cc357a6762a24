package checker

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/idemcheck/idemcheck/history"
)

// m2 judges M2 no phantom success: every 2xx names a charge id that the
// ledger holds as succeeded, and the response's amount, currency, order
// (when the body has one: a missing order is R5's) and status (when the
// body has one) are the ledger's, the currency in any case. When the request
// carried its key's body (or no valid key), what it asked for must also be
// what was charged; a mutated body answered with the first body's charge is
// P1's to judge.
func (ix *index) m2() CheckResult {
	c := newCheck("M2")
	n := 0
	for _, o := range ix.ops {
		if o.Outcome != history.OK {
			continue
		}
		n++
		if why := ix.phantom(o); why != "" {
			v := onOp(o, "%s answered %s: %s", opName(o), answer(o), why)
			if ch := ix.charges[o.ChargeID]; ch != nil {
				v.Charges = []string{ch.ID}
			}
			c.flag(Failed, v)
		}
	}
	c.Exercised = c.Exercised || n > 0
	c.Note = fmt.Sprintf("judged %d successful answers against %d ledger charges", n, len(ix.charges))
	return c
}

// phantom returns why o's success is not backed by the ledger, or "".
func (ix *index) phantom(o *opInfo) string {
	if o.ChargeID == "" {
		return "a success without a charge id"
	}
	ch := ix.charges[o.ChargeID]
	switch {
	case ch == nil:
		return "the ledger holds no charge " + o.ChargeID
	case !ch.Succeeded():
		return fmt.Sprintf("the ledger holds %s as %q, no money moved", ch.ID, ch.Status)
	}
	var bad []string
	respOrder := cmp.Or(o.RespOrder, ch.Order) // a body without the order is R5's, not money
	bad = append(bad, mismatches("response", o.RespAmount, o.RespCurrency, respOrder, ch)...)
	if o.RespStatus != "" && o.RespStatus != ch.Status {
		bad = append(bad, fmt.Sprintf("response status %q, ledger %q", o.RespStatus, ch.Status))
	}
	if !o.keyed || o.equal {
		bad = append(bad, mismatches("request", o.Amount, o.Currency, o.Order, ch)...)
	}
	return strings.Join(bad, "; ")
}

// mismatches compares one side's amount, currency and order with the
// ledger's. A currency is an ISO 4217 code, which names the same money in
// any case: Stripe answers usd whatever case it was sent, and a server
// that echoes USD tells the customer nothing false. (Payload equality
// still takes USD and usd for different bodies: that is about what the
// client sent, not about money.)
func mismatches(side string, amount int64, currency, order string, ch *charge) []string {
	var bad []string
	if amount != ch.Amount {
		bad = append(bad, fmt.Sprintf("%s amount %d, ledger %d", side, amount, ch.Amount))
	}
	if !strings.EqualFold(currency, ch.Currency) {
		bad = append(bad, fmt.Sprintf("%s currency %q, ledger %q", side, currency, ch.Currency))
	}
	if order != ch.Order {
		bad = append(bad, fmt.Sprintf("%s order %q, ledger %q", side, order, ch.Order))
	}
	return bad
}

// opName renders "op 7".
func opName(o *opInfo) string { return fmt.Sprintf("op %d", o.ID) }
