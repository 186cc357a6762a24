package faults

import (
	"context"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// A fault of class history.Skews (clock_skew, db_timezone) is a state a
// replica runs in, not a disruption: what disrupts is the relaunch that
// applies it and the one that undoes it. Each relaunch is recorded as a
// crash-class fault of its own, from before the replica is stopped until
// it is ready again, so the requests it cuts are excused and convergence
// counts from its end; the state in between holds nothing back. The
// runner's gate keeps the other examples' requests out during a relaunch
// only: such a fault declares itself Momentary.

// RelaunchName is the history name of a relaunch of a replica.
const RelaunchName = "relaunch"

// relaunch relaunches replica i with edit applied to its Launch, and
// records the relaunch in env's history as a crash-class fault that
// struck when the replica was stopped and healed when it was ready. A
// relaunch that failed is recorded as healed too: the replica may be
// down, and the error says so.
func relaunch(ctx context.Context, env Env, i int, why string, edit func(*harness.Launch)) error {
	id := env.Recorder().Inject(history.Fault{Name: RelaunchName, Class: history.Crash, Scope: history.Replica, Target: replicaName(i),
		Fired: history.FiredOnInject, Params: map[string]string{"for": why}})
	err := env.Relaunch(ctx, i, edit)
	env.Recorder().Heal(id)
	return err
}
