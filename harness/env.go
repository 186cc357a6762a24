package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/target"
)

// Env is a running environment, whatever runs it: the replicas of a
// target, the gateway simulator, and toxiproxy on every link. Process mode
// (package harness/process) and container mode (package harness/docker)
// are its two implementations; a new way to run a SUT is one more package
// that implements Env and offers a Launcher. Methods are safe for
// concurrent use; Close is idempotent and leaves nothing behind.
type Env interface {
	// Replicas is the number of replicas.
	Replicas() int
	// ReplicaURL is replica i's client-facing base URL, through its
	// client->replicaN link so that client-link faults apply.
	ReplicaURL(i int) string
	// GatewayController drives the gateway simulator, wherever it runs.
	GatewayController() gatewaysim.Controller
	// AddToxic puts a toxic on a link; RemoveToxic takes it off.
	AddToxic(l Link, t Toxic) error
	RemoveToxic(ctx context.Context, l Link, name string) error
	// SetLinkEnabled takes a link down (false) or up.
	SetLinkEnabled(l Link, enabled bool) error
	// LinkStates is every link as toxiproxy has it now: up or down, and
	// its toxics. Guard proves them unchanged after each inject and heal.
	LinkStates() (map[Link]LinkState, error)
	// Kill stops replica i at once (SIGKILL); Pause freezes it (SIGSTOP)
	// and Resume thaws it; Restart starts it again on the same address
	// and waits until it is ready.
	Kill(i int) error
	Pause(i int) error
	Resume(i int) error
	Restart(ctx context.Context, i int) error
	// RestartStore stops one of the target's stores ("postgres", "redis",
	// "mysql") and starts it again on the same address and data:
	// gracefully (nothing durable is lost), or with SIGKILL when crash
	// (what it had not made durable is). It returns once the store
	// accepts connections; ErrNoStore for a store the target lacks.
	RestartStore(ctx context.Context, store string, crash bool) error
	// Relaunch edits replica i's Launch (another clock, another session
	// time zone; the zero Launch is the replica as the target describes
	// it), stops the replica gracefully and starts it again on the same
	// address that way, and waits until it is ready. Later restarts keep
	// the Launch.
	Relaunch(ctx context.Context, i int, edit func(*Launch)) error
	Close() error
}

// Options configures a Launcher. The zero value starts everything
// throwaway with the target's own replica count.
type Options struct {
	// DatabaseURL names a PostgreSQL server to use instead of a throwaway
	// one (process mode; a fresh database is created in it and dropped on
	// Close).
	DatabaseURL string
	// Replicas overrides the target's replica count when > 0.
	Replicas int
	// Logger receives lifecycle messages; nil discards them.
	Logger *slog.Logger
	// Gateway configures the gateway simulator (its idempotency and key
	// TTL). Leave Now nil: ledger times are read on the real clock.
	Gateway gatewaysim.Config
	// WorkDir holds logs and scratch space. Default: a new temporary
	// directory, removed on Close unless KeepWorkDir. A WorkDir given
	// here is the caller's and is never removed.
	WorkDir     string
	KeepWorkDir bool
	// StopTimeout is the SIGTERM-to-SIGKILL grace of a restart or Close.
	StopTimeout time.Duration
	// RedisAppendFsync is Redis's appendfsync: always, everysec (the
	// default, as most deployments run) or no.
	RedisAppendFsync string
	// PostgresImage replaces the default PostgreSQL image (container mode).
	PostgresImage string
}

// Launcher starts an environment for a target.
type Launcher func(ctx context.Context, t *target.Target, opts Options) (Env, error)

// Prepare validates t and applies the options that change it (the
// replica count): the one check both modes make before starting anything.
func Prepare(t *target.Target, opts Options) (*target.Target, error) {
	tt := *t
	if err := tt.Validate(); err != nil {
		return nil, fmt.Errorf("target %q%w", t.Name, err) // a FieldError without a file reads ": field: message"
	}
	if opts.Replicas > 0 {
		tt.Replicas = opts.Replicas
	}
	return &tt, nil
}

// NewAPIKey is a fresh secret key for the replicas at the gateway; ledger
// entries carry it, so charges made by anyone else stand out.
func NewAPIKey() string { return "sk_test_idemcheck_" + RandomHex(8) }

// RandomHex is n random bytes in hex, for run and key ids.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// StandardVars are the SUT configuration variables every replica gets
// (docs/protocol.md), whatever the target file lists; its own env entries
// override them.
var StandardVars = []string{"LISTEN_ADDR", "DATABASE_URL", "REDIS_URL", "MYSQL_DSN", "MYSQL_URL", "GATEWAY_URL", "GATEWAY_API_KEY", "IDEMPOTENCY_TTL"}

// ReplicaEnv is replica environment built from the target's rendered
// variables: the standard variables (DATABASE_URL, REDIS_URL, MYSQL_DSN and
// MYSQL_URL only for the stores the target needs), then the target's own
// env entries, which win.
func ReplicaEnv(v target.Vars, own []string) []string {
	env := []string{"LISTEN_ADDR=" + v.ListenAddr, "GATEWAY_URL=" + v.GatewayURL,
		"GATEWAY_API_KEY=" + v.GatewayAPIKey, "IDEMPOTENCY_TTL=" + v.TTL.String()}
	for _, kv := range [][2]string{{"DATABASE_URL", v.DatabaseURL}, {"REDIS_URL", v.RedisURL}, {"MYSQL_DSN", v.MySQLDSN}, {"MYSQL_URL", v.MySQLURL}} {
		if kv[1] != "" {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	return append(env, own...)
}

// Rollback is what a Start defers right after creating its environment:
// when Start fails (*err set) or panics, it closes what was started, so
// that a half-started environment leaves nothing behind. A panic is
// re-raised after the close.
func Rollback(err *error, env io.Closer) {
	if p := recover(); p != nil {
		env.Close()
		panic(p)
	}
	if *err != nil {
		*err = errors.Join(*err, env.Close())
	}
}

// Pick is replica i of an environment's list: ErrClosed once the
// environment closed, ErrNoReplica for an index outside the list. Both
// modes look their replicas up with it.
func Pick[T any](closed bool, replicas []T, i int) (T, error) {
	var zero T
	if closed {
		return zero, ErrClosed
	}
	if i < 0 || i >= len(replicas) {
		return zero, fmt.Errorf("%w: %d of %d", ErrNoReplica, i, len(replicas))
	}
	return replicas[i], nil
}

// PickStore is the named store of an environment's stores: ErrClosed once
// the environment closed, ErrNoStore for a store the target does not
// need. Both modes look their stores up with it.
func PickStore[T any](closed bool, stores map[string]T, name string) (T, error) {
	var zero T
	if closed {
		return zero, ErrClosed
	}
	s, ok := stores[name]
	if !ok {
		return zero, fmt.Errorf("%w: the target has no store %q", ErrNoStore, name)
	}
	return s, nil
}
