package checker

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/history"
)

// a1 judges A1 accounting: every succeeded charge in the ledger belongs to
// an order that an example sent. Money the harness cannot attribute is
// FAILED, naming the charge: an orphan (no order: the server did not
// name its order where the run traces money) or a foreign charge (an order that neither
// this history's requests nor History.OtherOrders, the orders of other
// examples sharing the environment, name). Declines moved no money and are
// not judged. Exercised whenever the ledger holds a succeeded charge.
func (ix *index) a1() CheckResult {
	c := newCheck("A1")
	n, others := 0, 0
	for _, ch := range ix.ledger {
		if !ch.Succeeded() {
			continue
		}
		n++
		switch {
		case ch.Order == "":
			c.flag(Failed, Violation{Charges: []string{ch.ID}, Explanation: fmt.Sprintf(
				"charge %s moved %d %s with no order: it does not name one where the run traces money (the report's first contact says where), and no one can tell whose money it is", ch.ID, ch.Amount, ch.Currency)})
		case ix.byOrder[ch.Order] != nil, ix.bodyNames(ch.Order):
		case slices.Contains(ix.h.OtherOrders, ch.Order):
			others++
		default:
			c.flag(Failed, Violation{Order: ch.Order, Charges: []string{ch.ID}, Explanation: fmt.Sprintf(
				"charge %s moved %d %s for order %s, which no example sent", ch.ID, ch.Amount, ch.Currency, ch.Order)})
		}
	}
	c.Exercised = c.Exercised || n > 0
	c.Note = notes(fmt.Sprintf("judged %d succeeded ledger charges", n), othersNote(others))
	return c
}

// bodyNames says whether a request's body names order: a key-reuse
// mutation may carry another order id than the request's own, and when the
// key's first body was never stored the server rightly charges it. Order
// ids are the harness's unique tokens, so a quoted match is exact enough.
func (ix *index) bodyNames(order string) bool {
	q := `"` + order + `"`
	return slices.ContainsFunc(ix.ops, func(o *opInfo) bool { return strings.Contains(o.Body, q) })
}

func othersNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of them for orders other examples sent, judged in their histories", n)
}

// Accounting judges A1 alone over h. The run's reconciliation uses it on
// a history of no ops holding the ledger's charges that no example owns,
// so that the whole run's money is judged by the same rule as one
// example's.
func Accounting(h *history.History) CheckResult { return build(h).a1() }
