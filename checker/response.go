package checker

import (
	"fmt"

	"github.com/idemcheck/idemcheck/history"
)

// r5 judges R5 (NON-STRICT): a success body names the order it charged,
// as the protocol's response does. A body without it (a dialect that keeps
// the order elsewhere, say under metadata, without a target mapping it by
// JSON pointer) is a protocol deviation, not a phantom success: the ledger
// still proves the money through the charge id, which M2 judges. Each
// (tenant, key) with such answers is one violation listing them.
func (ix *index) r5() CheckResult {
	c := newCheck("R5")
	n := 0
	for _, l := range ix.lineages {
		var missing []*opInfo
		for _, o := range l.ops {
			if o.Outcome != history.OK {
				continue
			}
			n++
			if o.RespOrder == "" {
				missing = append(missing, o)
			}
		}
		if len(missing) > 0 {
			v := Violation{Tenant: l.tenant, Key: l.key, Order: missing[0].Order, Ops: opIDs(missing...),
				Explanation: fmt.Sprintf("%d success bodies did not name their order (map the target's fields.order_id by JSON pointer if it lives elsewhere)", len(missing))}
			c.flag(NonStrict, v)
		}
	}
	c.Exercised = c.Exercised || n > 0
	c.Note = fmt.Sprintf("judged %d success bodies with a valid key", n)
	return c
}
