package checker

import "github.com/idemcheck/idemcheck/history"

// MovedMoneyWrongly says whether h already holds money that the server
// should not have moved, as the checks whose catalog row says so
// (spec.movesMoney) judge it FAILED: two charges for one payment (M1, E1,
// E2), or a charge after the payment had been answered with a definitive
// failure, or by a request refused (M3). Later
// steps cannot take that money back, so an example that holds it may
// stop early (the runner's StopEarly asks between late-retry probes, when
// every request is answered and the ledger has caught up: no charge is
// still to come for what was sent, and a later request neither becomes
// an earlier charge's trigger nor changes the body an epoch's first
// request bound). Other failures are not final this way: a prefix can end
// on an indeterminate answer that a later probe or the final convergence
// resolves (M6). failure-expires-with-lock (a stored decline forgotten
// when its lock lapsed) was judged M3 FAILED only after its late-retry
// example had waited out every probe, about 20s into the run.
func MovedMoneyWrongly(h *history.History) bool {
	for _, c := range Check(h).Checks {
		if s, _ := specOf(c.ID); c.Verdict == Failed && s.movesMoney {
			return true
		}
	}
	return false
}
