package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/internal/freeport"
	"github.com/idemcheck/idemcheck/internal/leftovers"
	"github.com/idemcheck/idemcheck/target"
)

// DefaultStopTimeout is how long a replica gets between SIGTERM and SIGKILL
// when it is restarted or the Env closes: long enough for a graceful HTTP
// shutdown, short enough that Ctrl-C feels immediate.
const DefaultStopTimeout = 5 * time.Second

// Env is a running environment: PostgreSQL, the gateway simulator, an
// embedded toxiproxy with a proxy on every link, and the server replicas
// as child processes. Its methods are safe for concurrent use. Callers
// must `defer env.Close()` right after Start, and a CLI should also use
// CloseOnSignal: a Go program killed by SIGINT runs no defers.
type Env struct {
	target  *target.Target
	log     *slog.Logger
	workDir string
	ownDir  bool // workDir is ours to remove
	keep    bool
	apiKey  string

	stores   map[string]store // by name: the target's needs
	gw       *gateway
	proxies  *proxies
	clients  []string // client->replicaN proxy addresses
	replicas []*replica

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Start brings an environment up for t: the database (if t needs
// postgres), the gateway, toxiproxy and its proxies, then every replica in
// parallel, each ready-checked. If any step fails (or panics), everything
// already started is torn down before Start returns.
func Start(ctx context.Context, t *target.Target, opts harness.Options) (env *Env, err error) {
	e, err := newEnv(t, opts)
	if err != nil {
		return nil, err
	}
	defer harness.Rollback(&err, e)
	for _, step := range []func(context.Context, harness.Options) error{e.startStores, e.startGateway, e.startProxies, e.startReplicas} {
		if err := step(ctx, opts); err != nil {
			return nil, fmt.Errorf("start %s: %w", t.Name, err)
		}
	}
	return e, nil
}

func newEnv(t *target.Target, opts harness.Options) (*Env, error) {
	tt, err := harness.Prepare(t, opts)
	if err != nil {
		return nil, err
	}
	e := &Env{target: tt, log: opts.Logger, workDir: opts.WorkDir, keep: opts.KeepWorkDir, apiKey: harness.NewAPIKey()}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if err := e.makeWorkDir(); err != nil {
		return nil, err
	}
	return e, nil
}

// Launch is Start as a harness.Launcher: certify's default.
func Launch(ctx context.Context, t *target.Target, opts harness.Options) (harness.Env, error) {
	env, err := Start(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	return env, nil
}

func (e *Env) makeWorkDir() error {
	if e.workDir != "" {
		return os.MkdirAll(e.workDir, 0o755)
	}
	dir, err := os.MkdirTemp("", "idemcheck-env-")
	if err != nil {
		return fmt.Errorf("work dir: %w", err)
	}
	e.workDir, e.ownDir = dir, true
	return leftovers.Mark(dir) // a later run removes it if this one is killed
}

func (e *Env) startGateway(_ context.Context, opts harness.Options) error {
	gw, err := startGateway(opts.Gateway, e.log)
	if err != nil {
		return err
	}
	e.gw = gw
	return nil
}

func (e *Env) startProxies(_ context.Context, _ harness.Options) error {
	px, err := newProxies(filepath.Join(e.workDir, "toxiproxy.log"))
	if err != nil {
		return err
	}
	e.proxies = px
	return nil
}

// startReplicas prepares every replica (ports, proxies, command) and then
// starts them in parallel: start-up time is the slowest replica's, not
// the sum.
func (e *Env) startReplicas(ctx context.Context, opts harness.Options) error {
	for i := 0; i < e.target.Replicas; i++ {
		if err := e.prepareReplica(i, opts); err != nil {
			return err
		}
	}
	errs := make([]error, len(e.replicas))
	var wg sync.WaitGroup
	for i, r := range e.replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.mu.Lock()
			defer r.mu.Unlock()
			errs[i] = r.start(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// prepareReplica picks the replica's port, creates its three proxies and
// renders its command line with the proxied URLs.
func (e *Env) prepareReplica(i int, opts harness.Options) error {
	port, err := freeport.Port()
	if err != nil {
		return err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	vars, err := e.replicaVars(i, addr, port)
	if err != nil {
		return err
	}
	run, err := e.target.Render(vars)
	if err != nil {
		return fmt.Errorf("replica %d: %w", i, err)
	}
	grace := opts.StopTimeout
	if grace <= 0 {
		grace = DefaultStopTimeout
	}
	e.replicas = append(e.replicas, &replica{
		idx: i, addr: addr, logPath: e.LogPath(i), run: run, env: replicaEnviron(vars, run.Env),
		vars: vars, render: e.target.Render, ready: e.target.Ready, grace: grace, log: e.log,
	})
	return nil
}

// replicaVars creates replica i's proxies and its scratch directory and
// returns the template variables that point the replica at them.
func (e *Env) replicaVars(i int, addr string, port int) (target.Vars, error) {
	v := target.Vars{Replica: i, ListenAddr: addr, Port: port, GatewayAPIKey: e.apiKey,
		TTL: e.target.Policy.TTL, MaxWait: e.target.Policy.MaxWait, WorkDir: filepath.Join(e.workDir, fmt.Sprintf("replica%d", i))}
	if err := os.MkdirAll(v.WorkDir, 0o755); err != nil {
		return v, fmt.Errorf("replica %d: %w", i, err)
	}
	client, err := e.proxies.add(harness.ClientLink(i), addr)
	if err != nil {
		return v, err
	}
	e.clients = append(e.clients, client)
	upstream, err := e.gw.via(string(harness.GatewayLink(i)))
	if err != nil {
		return v, err
	}
	gw, err := e.proxies.add(harness.GatewayLink(i), upstream)
	if err != nil {
		return v, err
	}
	v.GatewayURL = "http://" + gw
	for _, name := range e.target.StoreNames() {
		s := e.stores[name]
		px, err := e.proxies.add(harness.StoreLink(i, name), s.upstream())
		if err != nil {
			return v, err
		}
		s.fill(&v, px)
	}
	return v, nil
}

// replicaEnviron is the harness's environment without the standard
// variables (a DATABASE_URL exported in the shell must not leak into a
// SUT), then the replica's own (harness.ReplicaEnv).
func replicaEnviron(v target.Vars, own []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !isStandard(kv) {
			env = append(env, kv)
		}
	}
	return append(env, harness.ReplicaEnv(v, own)...)
}

func isStandard(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	return slices.Contains(harness.StandardVars, k)
}

// Target is the validated target the Env runs (defaults filled, replica
// count overridden by Options.Replicas).
func (e *Env) Target() *target.Target { return e.target }

// Logger is the Env's logger, for faults and scenarios.
func (e *Env) Logger() *slog.Logger { return e.log }

// Replicas is the number of replicas.
func (e *Env) Replicas() int { return len(e.replicas) }

// ReplicaURL is the client-facing base URL of replica i: through its
// client->replicaN proxy, so client-link faults apply. "" for a bad index.
func (e *Env) ReplicaURL(i int) string {
	if i < 0 || i >= len(e.clients) {
		return ""
	}
	return "http://" + e.clients[i]
}

// ReplicaURLs lists ReplicaURL for every replica, in index order.
func (e *Env) ReplicaURLs() []string {
	out := make([]string, len(e.clients))
	for i := range e.clients {
		out[i] = e.ReplicaURL(i)
	}
	return out
}

// ReplicaAddr is replica i's own listen address, bypassing toxiproxy. It
// stays the same across restarts.
func (e *Env) ReplicaAddr(i int) string {
	if i < 0 || i >= len(e.replicas) {
		return ""
	}
	return e.replicas[i].addr
}

// LogPath is replica i's log file (stdout and stderr of every launch,
// each preceded by a marker line).
func (e *Env) LogPath(i int) string {
	return filepath.Join(e.workDir, fmt.Sprintf("replica%d.log", i))
}

// WorkDir is the directory holding logs and scratch space.
func (e *Env) WorkDir() string { return e.workDir }

// DatabaseURL is the Env's database, direct (not through any link): for
// the harness's own inspection. "" when the target needs no PostgreSQL.
func (e *Env) DatabaseURL() string {
	if db, ok := e.stores["postgres"].(*database); ok {
		return db.url
	}
	return ""
}
