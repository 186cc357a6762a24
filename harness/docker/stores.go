package docker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/internal/mysqlserver"
	"github.com/idemcheck/idemcheck/internal/pgcluster"
	"github.com/idemcheck/idemcheck/internal/redisserver"
	"github.com/idemcheck/idemcheck/target"
)

// storeKind is how container mode runs one of target.Stores: the
// container (its data directory on a volume, so that a restart keeps
// it), the signal of a graceful stop, a readiness probe on its published
// address, and the variables a replica gets.
type storeKind struct {
	spec  spec
	port  int    // the port replicas reach it on, inside the network
	stop  string // docker stop's signal: the server's graceful shutdown
	ready func(ctx context.Context, addr string) error
	// vars sets a replica's variables, its link listening on proxy; db is
	// the run's database ("" where the store has none of its own).
	vars func(v *target.Vars, proxy, db string)
	// newDB makes the run's database on the server at addr and names it.
	newDB func(ctx context.Context, addr string) (string, error)
}

// Ports and data directories inside the store containers.
const (
	pgContainerPort    = 5432
	redisContainerPort = 6379
	mysqlContainerPort = 3306
	pgDataDir          = "/var/lib/postgresql/data" // PGDATA's parent, in both our image and the official one
	redisDataDir       = "/data"
	mysqlDataDir       = "/var/lib/mysql" // images/build.sh initialises it
)

// storeKindOf is the container of store name for the Env's options.
func storeKindOf(name string, opts harness.Options) (storeKind, error) {
	switch name {
	case "postgres":
		return postgresKind(opts), nil
	case "redis":
		return redisKind(opts)
	case "mysql":
		return mysqlKind(), nil
	}
	return storeKind{}, fmt.Errorf("%w: no store %q", harness.ErrUnknownLink, name)
}

// postgresKind runs our image or the target's postgres_image (the
// official image reads the same variable and data directory).
func postgresKind(opts harness.Options) storeKind {
	return storeKind{
		spec: spec{image: postgresImage(opts), env: map[string]string{"POSTGRES_HOST_AUTH_METHOD": "trust"}, volume: pgDataDir},
		port: pgContainerPort,
		stop: "SIGINT", // fast shutdown; SIGTERM would wait for every client to leave
		ready: func(ctx context.Context, addr string) error {
			return pgcluster.Ping(ctx, postgresURL(addr))
		},
		vars: func(v *target.Vars, proxy, _ string) { v.DatabaseURL = postgresURL(proxy) },
	}
}

// redisKind runs Redis as process mode does (redisserver.Args), with the
// run's appendfsync.
func redisKind(opts harness.Options) (storeKind, error) {
	args, err := redisserver.Args(redisContainerPort, "0.0.0.0", redisDataDir, opts.RedisAppendFsync)
	if err != nil {
		return storeKind{}, err
	}
	return storeKind{
		spec:  spec{image: RedisImage, cmd: args, volume: redisDataDir},
		port:  redisContainerPort,
		stop:  "SIGTERM", // Redis fsyncs its append-only file and exits
		ready: redisserver.Ping,
		vars:  func(v *target.Vars, proxy, _ string) { v.RedisURL = "redis://" + proxy + "/0" },
	}, nil
}

// mysqlKind runs MariaDB as process mode does (mysqlserver.Args), root
// in the container, on the data directory the image was built with.
func mysqlKind() storeKind {
	args := mysqlserver.Args(mysqlserver.Config{DataDir: mysqlDataDir, Socket: "/tmp/mysqld.sock",
		Port: mysqlContainerPort, Bind: "0.0.0.0", User: "root"})
	return storeKind{
		spec:  spec{image: MariaDBImage, cmd: args, volume: mysqlDataDir},
		port:  mysqlContainerPort,
		stop:  "SIGTERM",
		ready: mysqlserver.Ping,
		newDB: newMySQLDatabase,
		vars: func(v *target.Vars, proxy, db string) {
			v.MySQLDSN, v.MySQLURL = mysqlserver.DSNAt(proxy, db), mysqlserver.URLAt(proxy, db)
		},
	}
}

func postgresURL(addr string) string {
	return "postgres://postgres@" + addr + "/postgres?sslmode=disable"
}

// newMySQLDatabase is a fresh database for the run, as process mode makes.
func newMySQLDatabase(ctx context.Context, addr string) (string, error) {
	name := "idemcheck_" + strings.ToLower(harness.RandomHex(4))
	return name, mysqlserver.CreateDatabaseAt(ctx, addr, name)
}

// store is one store container of the Env. Its name, network alias,
// volume and links never change, so a restarted store is reachable on the
// same links with the same data; only its published port may change.
type store struct {
	name string
	kind storeKind
	db   string // the run's database (mysql)

	mu sync.Mutex // serialises restarts
	c  *testcontainers.DockerContainer
}

// newStores prepares a store for every one the target needs.
func newStores(tg *target.Target, opts harness.Options) (map[string]*store, error) {
	stores := map[string]*store{}
	for _, name := range tg.StoreNames() {
		k, err := storeKindOf(name, opts)
		if err != nil {
			return nil, err
		}
		k.spec.role = name
		stores[name] = &store{name: name, kind: k}
	}
	return stores, nil
}

// storeWait bounds a store's readiness after a start or a restart.
const storeWait = 60 * time.Second

// startStore runs store s and waits until it accepts connections; the
// first start also makes the run's database.
func (e *Env) startStore(ctx context.Context, s *store) error {
	sp := s.kind.spec
	sp.ports = []string{fmt.Sprintf("%d/tcp", s.kind.port)}
	sp.stopSignal = s.kind.stop
	c, err := e.run(ctx, sp)
	if err != nil {
		return err
	}
	s.c = c
	addr, err := e.waitStore(ctx, s)
	if err != nil || s.kind.newDB == nil {
		return err
	}
	s.db, err = s.kind.newDB(ctx, addr)
	return err
}

// waitStore probes s on its published address (read again each round: a
// restarted container may be published elsewhere) until it answers,
// storeWait passes, or the container exits; it returns the address.
func (e *Env) waitStore(ctx context.Context, s *store) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	for {
		addr, err := hostAddr(ctx, s.c, fmt.Sprintf("%d/tcp", s.kind.port))
		if err == nil {
			err = probe(ctx, s.kind.ready, addr)
			if err == nil {
				return addr, nil
			}
		}
		if running, _, serr := e.state(ctx, s.c.GetContainerID()); serr == nil && !running {
			return "", fmt.Errorf("%s (%s) exited before it was ready: %w%s", s.name, s.kind.spec.image, err, e.logTail(s.c, 15))
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%s (%s) not ready after %s: %w%s", s.name, s.kind.spec.image, storeWait, err, e.logTail(s.c, 15))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probe is one readiness check, bounded on its own so that a connection
// the engine's port proxy holds open cannot use up the whole wait.
func probe(ctx context.Context, ready func(context.Context, string) error, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return ready(ctx, addr)
}

// RestartStore stops the named store's container and starts it again,
// same name, alias, volume and links: gracefully (docker stop: the
// server's own shutdown signal, SIGKILL after StopTimeout), or with
// SIGKILL when crash (what the server had not written is lost). It
// returns once the store accepts connections again. The replicas' links
// stay up: their connections break as they would against a real store
// restart.
func (e *Env) RestartStore(ctx context.Context, name string, crash bool) error {
	s, err := harness.PickStore(e.closed.Load(), e.stores, name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := e.stopStore(ctx, s, crash); err != nil {
		return fmt.Errorf("restart %s: %w", name, err)
	}
	if _, err := e.cli.ContainerStart(ctx, s.c.GetContainerID(), client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("restart %s: start: %w", name, err)
	}
	if _, err := e.waitStore(ctx, s); err != nil {
		return fmt.Errorf("restart %s: %w", name, err)
	}
	e.log.Info("store restarted", "store", name, "crash", crash)
	return nil
}

// stopStore stops s's container, by its graceful signal or SIGKILL, and
// returns once the engine reports it stopped.
func (e *Env) stopStore(ctx context.Context, s *store, crash bool) error {
	id := s.c.GetContainerID()
	running, _, err := e.state(ctx, id)
	if err != nil || !running {
		return err
	}
	if crash {
		if _, err := e.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
			return fmt.Errorf("kill: %w", err)
		}
		return e.waitState(ctx, id, func(running, _ bool) bool { return !running })
	}
	grace := int(e.stopGrace.Seconds())
	if _, err := e.cli.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &grace}); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	return nil
}

// storeContainers are the store containers in Stores order, for saveLogs.
func (e *Env) storeContainers() (names []string, cs []*testcontainers.DockerContainer) {
	for _, name := range target.Stores {
		if s, ok := e.stores[name]; ok && s.c != nil {
			names, cs = append(names, name), append(cs, s.c)
		}
	}
	return names, cs
}
