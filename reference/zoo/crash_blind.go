package zoo

import "github.com/idemcheck/idemcheck/reference"

// crashBlind recovers from everything a gateway can do to it but not from
// its own death: an indeterminate gateway answer releases the key, and a
// retry takes the released key over and re-asks the gateway under the same
// request id, as the reference does. But it never takes over a key whose
// owner simply stopped (a lease that ran out while still in progress), and
// it has no sweeper. Slow gateways, 5xx, dropped answers and reset links
// are all handled; only a killed replica leaves a key stuck.
//
// Incident: a deploy kills a replica during a gateway call; that order can
// never be completed or retried, every retry gets 409 forever (M6, found
// by crash-window only when a kill is seen to fire). A harness that grants
// crash safety (L4) from a run that only slowed the gateway certifies it.
var crashBlind = Variant{
	Name: "crash-blind",
	Bug:  "recovers from gateway errors but never takes over a key whose owner died, and has no sweeper",
	New: withoutSweeper(hooked(func(*reference.Server) reference.Hooks {
		return reference.Hooks{MayTakeOver: func(rec *reference.Record) bool { return rec.State == reference.StateNeedsRecovery }}
	})),
}
