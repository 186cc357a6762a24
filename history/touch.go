package history

import "time"

// Touch is one piece of evidence that something besides idemcheck
// reached the harness during a run: a toxic, a link or a gateway rule
// idemcheck did not set (or one it set, gone), or a request for a control
// API (the gateway simulator's /_sim/..., toxiproxy's) on the provider's
// address. T1 judges them: any touch is FAILED, and no other verdict of
// the run can be trusted.
type Touch struct {
	// At is when it was found, from the run's start.
	At time.Duration `json:"at"`
	// What was touched or asked for.
	What string `json:"what"`
	// By is the replica or link it came by, or what it touched when that
	// cannot be told.
	By string `json:"by"`
	// Found is when idemcheck found it: "before adding toxic ... on ...",
	// "as it arrived at the gateway (by replica0->gateway)".
	Found string `json:"found"`
}
