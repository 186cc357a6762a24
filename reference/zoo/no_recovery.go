package zoo

import (
	"context"

	"github.com/idemcheck/idemcheck/reference"
)

// noRecovery claims keys atomically but has no recovery at all: a retry
// never takes over an expired lease, there is no sweeper, and an
// indeterminate gateway answer leaves the key in progress.
//
// Incident: after a crash or a gateway error the order can never be
// completed or retried: every retry gets 409 forever (M6, found by
// crash-window).
var noRecovery = Variant{
	Name: "no-recovery",
	Bug:  "no lease takeover and no sweeper: a key whose owner crashed stays in progress",
	New: withoutSweeper(hooked(func(*reference.Server) reference.Hooks {
		return reference.Hooks{
			MayTakeOver:   func(*reference.Record) bool { return false },
			Indeterminate: func(context.Context, reference.Job) {}, // the key stays in progress, leased to no one alive
		}
	})),
}
