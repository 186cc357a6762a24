package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/internal/boundedlog"
	"github.com/idemcheck/idemcheck/target"
)

// replicaPort is the port a replica listens on inside its container: the
// target's {{.Port}} and the port of {{.ListenAddr}} (0.0.0.0:8080).
const replicaPort = 8080

// replica is one server container. Its name, network alias and proxies
// never change, so a restarted replica is reachable on the same links.
type replica struct {
	idx    int
	spec   spec
	ready  target.Ready
	launch harness.Launch // what faults changed in it

	mu sync.Mutex // serialises Kill, Pause, Resume, Restart
	c  *testcontainers.DockerContainer
}

// startReplicas renders every replica's configuration and starts them in
// parallel, each ready-checked.
func (e *Env) startReplicas(ctx context.Context) error {
	for i := 0; i < e.target.Replicas; i++ {
		s, err := e.replicaSpec(i, harness.Launch{})
		if err != nil {
			return err
		}
		e.replicas = append(e.replicas, &replica{idx: i, spec: s, ready: e.target.Ready})
	}
	errs := make([]error, len(e.replicas))
	var wg sync.WaitGroup
	for i, r := range e.replicas {
		wg.Go(func() { errs[i] = e.startReplica(ctx, r) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// replicaSpec renders the target for replica i inside the network: the
// standard variables (the gateway's, and each store's) point at the
// replica's own proxies in the toxiproxy container. With image:, start.command (if any) replaces the image's
// entrypoint and start.args are its command; for the built-ins (whose
// command is the reference-server binary) only the args are kept. l
// edits the variables and adds to the environment (Relaunch).
func (e *Env) replicaSpec(i int, l harness.Launch) (spec, error) {
	v := target.Vars{Replica: i, ListenAddr: fmt.Sprintf("0.0.0.0:%d", replicaPort), Port: replicaPort,
		GatewayURL: fmt.Sprintf("http://toxiproxy:%d", linkPort(harness.GatewayLink(i))), GatewayAPIKey: e.apiKey,
		TTL: e.target.Policy.TTL, MaxWait: e.target.Policy.MaxWait, WorkDir: "/tmp"}
	for _, name := range e.target.StoreNames() {
		s := e.stores[name]
		s.kind.vars(&v, fmt.Sprintf("toxiproxy:%d", linkPort(harness.StoreLink(i, name))), s.db)
	}
	v, err := l.Apply(v)
	if err != nil {
		return spec{}, fmt.Errorf("replica %d: %w", i, err)
	}
	run, err := e.target.Render(v)
	if err != nil {
		return spec{}, fmt.Errorf("replica %d: %w", i, err)
	}
	env := map[string]string{}
	for _, kv := range append(harness.ReplicaEnv(v, run.Env), l.Env(harness.LibFakeTime)...) {
		k, val, _ := strings.Cut(kv, "=")
		env[k] = val
	}
	s := spec{role: fmt.Sprintf("replica%d", i), image: e.image, cmd: run.Args, env: env}
	if e.target.Image != "" && run.Command != "" {
		s.entrypoint = []string{run.Command}
	}
	return s, nil
}

func (e *Env) startReplica(ctx context.Context, r *replica) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := e.run(ctx, r.spec)
	if err != nil {
		return fmt.Errorf("replica %d: %w", r.idx, err)
	}
	r.c = c
	return e.waitReplica(ctx, r)
}

// waitReplica polls the ready path through the replica's ready proxy
// (not through its client link, so a link fault cannot fail a restart).
func (e *Env) waitReplica(ctx context.Context, r *replica) error {
	addr := e.links.readyAddr(r.idx)
	if err := waitHTTP(ctx, "http://"+addr+r.ready.Path, r.ready.Timeout); err != nil {
		return fmt.Errorf("%w: replica %d (%s): %w%s", harness.ErrNotReady, r.idx, e.image, err, e.logTail(r.c, 10))
	}
	return nil
}

func (e *Env) replica(i int) (*replica, error) {
	return harness.Pick(e.closed.Load(), e.replicas, i)
}

// Kill sends SIGKILL to replica i's container through the Docker API and
// returns once the engine reports it stopped.
func (e *Env) Kill(i int) error {
	return e.control(i, "kill", func(ctx context.Context, id string) error {
		if _, err := e.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
			return err
		}
		return e.waitState(ctx, id, func(running, _ bool) bool { return !running })
	})
}

// Pause freezes replica i's container (docker pause, the cgroup freezer):
// its sockets stay open, so requests hang instead of failing.
func (e *Env) Pause(i int) error {
	return e.control(i, "pause", func(ctx context.Context, id string) error {
		_, err := e.cli.ContainerPause(ctx, id, client.ContainerPauseOptions{})
		return err
	})
}

// Resume thaws replica i's container.
func (e *Env) Resume(i int) error {
	return e.control(i, "resume", func(ctx context.Context, id string) error {
		_, err := e.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
		return err
	})
}

// Restart starts replica i's container again (same name, alias, proxies)
// and waits for it to be ready. A running replica is stopped first
// (SIGTERM, SIGKILL after 5s); a killed one is simply started.
func (e *Env) Restart(ctx context.Context, i int) error {
	r, err := e.replica(i)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.c.GetContainerID()
	if running, paused, err := e.state(ctx, id); err == nil && running {
		if paused {
			_, _ = e.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
		}
		grace := 5
		if _, err := e.cli.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &grace}); err != nil {
			return fmt.Errorf("restart replica %d: stop: %w", i, err)
		}
	}
	if _, err := e.cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("restart replica %d: %w", i, err)
	}
	if err := e.waitReplica(ctx, r); err != nil {
		return fmt.Errorf("restart replica %d: %w", i, err)
	}
	e.log.Info("replica restarted", "replica", i)
	return nil
}

// Relaunch edits replica i's Launch and replaces its container with one
// made that way (same name, alias and proxies: an environment can only be
// set when a container is created), and waits for it to be ready; later
// restarts keep it.
func (e *Env) Relaunch(ctx context.Context, i int, edit func(*harness.Launch)) error {
	r, err := e.replica(i)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.launch
	edit(&l)
	s, err := e.replicaSpec(i, l)
	if err != nil {
		return err
	}
	grace := 5
	id := r.c.GetContainerID()
	_, _ = e.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
	if _, err := e.cli.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &grace}); err != nil && !isNotFound(err) {
		return fmt.Errorf("relaunch replica %d: stop: %w", i, err)
	}
	e.keepLogs(ctx, r.spec.role, id)
	if _, err := e.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true}); err != nil && !isNotFound(err) {
		return fmt.Errorf("relaunch replica %d: remove: %w", i, err)
	}
	c, err := e.run(ctx, s)
	if err != nil {
		return fmt.Errorf("relaunch replica %d: %w", i, err)
	}
	r.c, r.spec, r.launch = c, s, l
	if err := e.waitReplica(ctx, r); err != nil {
		return fmt.Errorf("relaunch replica %d: %w", i, err)
	}
	e.log.Info("replica relaunched", "replica", i, "clock", l.Clock, "time_zone", l.TimeZone)
	return nil
}

// keepLogs keeps the log of a container about to be replaced, so that
// the replica's saved log covers every container it ran in.
func (e *Env) keepLogs(ctx context.Context, role, id string) {
	logs := e.fullLogs(ctx, id)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.replaced == nil {
		e.replaced = map[string]string{}
	}
	e.replaced[role] = string(boundedlog.Clip([]byte(e.replaced[role] + logs))) // a soak's relaunches hold no more than a bounded log
}

// control runs one Docker API call on replica i's container.
func (e *Env) control(i int, what string, call func(context.Context, string) error) error {
	r, err := e.replica(i)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := call(ctx, r.c.GetContainerID()); err != nil {
		return fmt.Errorf("%s replica %d: %w", what, i, err)
	}
	e.log.Info("replica "+what, "replica", i)
	return nil
}

func (e *Env) state(ctx context.Context, id string) (running, paused bool, err error) {
	res, err := e.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return false, false, err
	}
	st := res.Container.State
	if st == nil {
		return false, false, nil
	}
	return st.Running, st.Paused, nil
}

func (e *Env) waitState(ctx context.Context, id string, cond func(running, paused bool) bool) error {
	for {
		running, paused, err := e.state(ctx, id)
		if err != nil {
			return err
		}
		if cond(running, paused) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
