package harness

import "errors"

// Sentinel errors. Every error the package returns wraps one of these (or a
// context error), so callers decide with errors.Is: the CLI maps
// ErrSetup-class failures to exit code 3 ("the environment could not be set
// up"), and faults tell "already dead" from "could not kill".
var (
	// ErrClosed is returned by operations on an Env after Close began.
	ErrClosed = errors.New("harness: environment closed")
	// ErrNoReplica means a replica index outside [0, Replicas()).
	ErrNoReplica = errors.New("harness: no such replica")
	// ErrUnknownLink means a Link that is malformed or not part of this Env
	// (a postgres link of a target that does not need PostgreSQL).
	ErrUnknownLink = errors.New("harness: no such link")
	// ErrNoStore means a store the Env does not run (the target does not
	// need it), or one it cannot restart (an external database).
	ErrNoStore = errors.New("harness: no such store")
	// ErrNotRunning means a process operation on a replica that has no live
	// process (killed and not yet restarted, or exited by itself).
	ErrNotRunning = errors.New("harness: replica not running")
	// ErrNotReady means a replica did not pass its readiness probe in time
	// or exited while being probed; the error text carries its log tail.
	ErrNotReady = errors.New("harness: replica not ready")
	// ErrDatabaseURL means a DATABASE_URL the harness cannot proxy: not a
	// postgres:// URL with one TCP host.
	ErrDatabaseURL = errors.New("harness: unusable database URL")
	// ErrInterrupted is the cause of the context CloseOnSignal returns when
	// a SIGINT or SIGTERM arrived (context.Cause tells it from a timeout).
	ErrInterrupted = errors.New("harness: interrupted by signal")
)
