package faults

import (
	"context"

	"github.com/idemcheck/idemcheck/history"
)

// StoreRestart stops one of the target's stores and starts it again on the
// same address and data, while the replicas keep running: their
// connections to it break as they would in production, and a server must
// reconnect and carry on. Gracefully (store_restart) the store keeps what
// it had made durable (Redis its append-only file, MySQL and PostgreSQL
// their logs); as a crash (store_kill, SIGKILL) it loses what it had not
// yet synced (Redis with appendfsync everysec: up to a second of writes),
// which shows what a server does when its store forgets. The whole restart
// happens in Inject, which returns once the store accepts connections;
// Heal has nothing left to undo.
type StoreRestart struct {
	Store string
	Crash bool
}

// Name is "store_restart" or "store_kill".
func (f *StoreRestart) Name() string {
	if f.Crash {
		return "store_kill"
	}
	return "store_restart"
}

// Class is history.Disturbs for a graceful restart: requests fail and are
// retried, nothing the store acknowledged is lost. A crash can lose an
// acknowledged claim, so it is history.Crash.
func (f *StoreRestart) Class() history.Class {
	if f.Crash {
		return history.Crash
	}
	return history.Disturbs
}

// Scope is history.Environment: every replica uses the store.
func (f *StoreRestart) Scope() history.Scope { return history.Environment }

// Target is the store: "postgres", "redis" or "mysql".
func (f *StoreRestart) Target() string { return f.Store }

// Inject restarts the store and waits until it accepts connections.
func (f *StoreRestart) Inject(ctx context.Context, env Env) error {
	return env.RestartStore(ctx, f.Store, f.Crash)
}

// Heal does nothing: the restart is complete when Inject returns.
func (f *StoreRestart) Heal(context.Context, Env) error { return nil }

func init() {
	register("store_restart", builder{"store", nil, func(r *reader) Fault { return &StoreRestart{Store: r.spec.Target} }})
	register("store_kill", builder{"store", nil, func(r *reader) Fault { return &StoreRestart{Store: r.spec.Target, Crash: true} }})
}
