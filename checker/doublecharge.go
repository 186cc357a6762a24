package checker

import (
	"slices"

	"github.com/idemcheck/idemcheck/history"
)

// DoubleCharged says whether h already holds two charges for one payment
// that the checks judge FAILED (M1, E1, E2). Later steps cannot take that
// money back, so an example that holds it may stop early (the runner's
// StopEarly). Other failures are not final this way: a prefix can end on
// an indeterminate answer that a later probe or the final convergence
// resolves (M6), or name a charge the ledger has not delivered yet (M3).
func DoubleCharged(h *history.History) bool {
	for _, c := range Check(h).Checks {
		if c.Verdict == Failed && slices.Contains(doubleCharge, c.ID) {
			return true
		}
	}
	return false
}

// doubleCharge are the checks whose FAILED is two charges the ledger
// already holds for one payment.
var doubleCharge = []string{"M1", "E1", "E2"}
