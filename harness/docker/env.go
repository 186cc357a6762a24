package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/testcontainers/testcontainers-go"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/internal/boundedlog"
	"github.com/idemcheck/idemcheck/target"
)

// LabelRun is the label every container and network of a run carries, with
// the run's id as its value: the backstop Close and RemoveAll remove by.
const LabelRun = "idemcheck.run"

// Env is a running container environment. Its methods are safe for
// concurrent use; Close is idempotent and removes everything Start made.
type Env struct {
	target     *target.Target
	log        *slog.Logger
	cli        *testcontainers.DockerClient
	runID      string
	apiKey     string
	image      string // the replicas' image
	gatewayCfg gatewaysim.Config
	logDir     string        // where Close saves the containers' logs
	stopGrace  time.Duration // a store's docker stop grace before SIGKILL

	stores   map[string]*store // by name, the ones the target needs
	gw       *testcontainers.DockerContainer
	tox      *testcontainers.DockerContainer
	links    *links
	gateway  *gatewayCtl
	replicas []*replica

	mu        sync.Mutex
	created   []string          // container ids, for Close
	replaced  map[string]string // role -> logs of the containers Relaunch replaced
	networks  [netCount]runNetwork
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Launch is Start as a harness.Launcher: `certify --docker` passes it.
func Launch(ctx context.Context, tg *target.Target, opts harness.Options) (harness.Env, error) {
	if opts.PostgresImage == "" {
		opts.PostgresImage = tg.PostgresImage
	}
	env, err := Start(ctx, tg, opts)
	if err != nil {
		return nil, err
	}
	return env, nil
}

// Start brings a container environment up for tg: the network, then
// PostgreSQL (when tg needs it), the gateway simulator and toxiproxy in
// parallel, the proxies, then every replica in parallel, each
// ready-checked. If any step fails, or ctx ends, everything already
// created is removed before Start returns.
func Start(ctx context.Context, tg *target.Target, opts harness.Options) (env *Env, err error) {
	e, err := newEnv(ctx, tg, opts)
	if err != nil {
		return nil, err
	}
	defer harness.Rollback(&err, e)
	begin := time.Now()
	for _, step := range []struct {
		name string
		run  func(context.Context) error
	}{{"network", e.startNetwork}, {"services", e.startServices}, {"links", e.startLinks}, {"replicas", e.startReplicas}} {
		t := time.Now()
		if err := step.run(ctx); err != nil {
			return nil, fmt.Errorf("start %s in docker: %w", tg.Name, err)
		}
		e.log.Debug("docker start step", "step", step.name, "took", time.Since(t).Round(time.Millisecond))
	}
	e.log.Info("docker environment up", "took", time.Since(begin).Round(time.Millisecond))
	return e, nil
}

func newEnv(ctx context.Context, tg *target.Target, opts harness.Options) (*Env, error) {
	// Ryuk, testcontainers' reaper, is an image to pull, and nothing can be
	// pulled; this package removes what it made itself (Close, labels).
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	tt, err := harness.Prepare(tg, opts)
	if err != nil {
		return nil, err
	}
	img, err := replicaImage(tt)
	if err != nil {
		return nil, err
	}
	stores, err := newStores(tt, opts)
	if err != nil {
		return nil, err
	}
	cli, err := newClient(ctx)
	if err != nil {
		return nil, err
	}
	e := &Env{target: tt, log: opts.Logger, cli: cli, runID: harness.RandomHex(6), apiKey: harness.NewAPIKey(), image: img,
		gatewayCfg: opts.Gateway, logDir: opts.WorkDir, stopGrace: opts.StopTimeout, stores: stores}
	if e.stopGrace <= 0 {
		e.stopGrace = defaultStopGrace
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.log = e.log.With("run", e.runID)
	if err := checkImages(ctx, cli, e.images()...); err != nil {
		cli.Close()
		return nil, err
	}
	return e, nil
}

// replicaImage is the target's image:, or the reference-server image for
// a target whose command is the reference server (the built-ins).
func replicaImage(t *target.Target) (string, error) {
	if t.Image != "" {
		return t.Image, nil
	}
	if filepath.Base(t.Start.Command) == "reference-server" {
		return ReferenceImage, nil
	}
	return "", fmt.Errorf("target %s: container mode needs an image: (only the built-in targets run the reference-server image)", t.Name)
}

// images are the images the Env runs: the services', the replicas', and
// each store's the target needs.
func (e *Env) images() []string {
	imgs := []string{GatewayImage, ToxiproxyImage, e.image}
	for _, name := range e.target.StoreNames() {
		imgs = append(imgs, e.stores[name].kind.spec.image)
	}
	return imgs
}

// defaultStopGrace is a store's docker stop grace when Options leave it
// unset: a graceful shutdown that takes longer is not graceful.
const defaultStopGrace = 10 * time.Second

// Target is the validated target the Env runs.
func (e *Env) Target() *target.Target { return e.target }

// RunID is the value of the idemcheck.run label on everything the Env made.
func (e *Env) RunID() string { return e.runID }

// Replicas is the number of replicas.
func (e *Env) Replicas() int { return len(e.replicas) }

// ReplicaURL is the client-facing base URL of replica i: toxiproxy's
// published port of its client link, so client-link faults apply.
func (e *Env) ReplicaURL(i int) string {
	if i < 0 || i >= len(e.replicas) {
		return ""
	}
	return "http://" + e.links.addr(harness.ClientLink(i))
}

// GatewayController drives the simulator container over its control API.
func (e *Env) GatewayController() gatewaysim.Controller { return e.gateway }

// GatewayControlURL is the simulator's control API, published on
// loopback for the harness; no replica can reach it (attach).
func (e *Env) GatewayControlURL() string { return e.gateway.c.BaseURL }

// GatewayAPIKey is the secret key the replicas authenticate with.
func (e *Env) GatewayAPIKey() string { return e.apiKey }

// logged are the containers whose logs Close writes, by file name, into
// the WorkDir given to Start: while the environment runs the logs live in
// Docker, and error messages carry their tail.
func (e *Env) logged() (names []string, cs []*testcontainers.DockerContainer) {
	for i, r := range e.replicas {
		r.mu.Lock()
		names, cs = append(names, fmt.Sprintf("replica%d", i)), append(cs, r.c)
		r.mu.Unlock()
	}
	names, cs = append(names, "gateway", "toxiproxy"), append(cs, e.gw, e.tox)
	sn, sc := e.storeContainers()
	return append(names, sn...), append(cs, sc...)
}

// saveLogs writes every container's whole log into the log folder, so
// that the report can point at them after the containers are gone.
func (e *Env) saveLogs(ctx context.Context) error {
	if e.logDir == "" {
		return nil
	}
	if err := os.MkdirAll(e.logDir, 0o755); err != nil {
		return err
	}
	names, cs := e.logged()
	var errs []error
	for i, name := range names {
		if cs[i] == nil {
			continue
		}
		e.mu.Lock()
		earlier := e.replaced[name]
		e.mu.Unlock()
		logs := earlier + e.fullLogs(ctx, cs[i].GetContainerID())
		errs = append(errs, os.WriteFile(filepath.Join(e.logDir, name+".log"), boundedlog.Clip([]byte(logs)), 0o644))
	}
	return errors.Join(errs...)
}
