package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/internal/mysqlserver"
	"github.com/idemcheck/idemcheck/internal/redisserver"
	"github.com/idemcheck/idemcheck/target"
)

// store is one store the target needs, run for the Env: every replica
// reaches it through its own replicaN-><name> link.
type store interface {
	// upstream is host:port, the upstream of every replica's link.
	upstream() string
	// fill sets the template variables of a replica whose link listens on
	// proxy.
	fill(v *target.Vars, proxy string)
	// restart stops the store and starts it again on the same address and
	// data: gracefully, or with SIGKILL when crash (what it had not made
	// durable is lost); it returns once the store accepts connections.
	restart(ctx context.Context, crash bool) error
	close(ctx context.Context, log *slog.Logger, keep bool) error
	// held lists its processes, ports and directories (Resources).
	held() Resources
}

// startStores starts every store the target needs, in parallel (MariaDB's
// install takes seconds).
func (e *Env) startStores(ctx context.Context, opts harness.Options) error {
	names := e.target.StoreNames()
	got := make([]store, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { got[i], errs[i] = startStore(ctx, name, opts, e.log.With("component", name)) })
	}
	wg.Wait()
	e.stores = map[string]store{}
	for i, s := range got {
		if s != nil {
			e.stores[names[i]] = s
		}
	}
	return errors.Join(errs...)
}

func startStore(ctx context.Context, name string, opts harness.Options, log *slog.Logger) (store, error) {
	switch name {
	case "postgres":
		db, err := startDatabase(ctx, opts.DatabaseURL, log)
		if err != nil {
			return nil, err
		}
		if _, err := db.hostPort(); err != nil {
			db.close(context.Background(), log, false)
			return nil, err
		}
		return db, nil
	case "redis":
		s, err := redisserver.Start(ctx, redisserver.Options{AppendFsync: opts.RedisAppendFsync, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
		return redisStore{s}, nil
	case "mysql":
		return startMySQL(ctx, log)
	}
	return nil, fmt.Errorf("%w: no store %q", harness.ErrUnknownLink, name)
}

// storeStartTimeout bounds a store's start after a crash.
const storeStartTimeout = 60 * time.Second

// redisStore is a throwaway Redis; replicas use logical database 0.
type redisStore struct{ *redisserver.Server }

func (r redisStore) upstream() string { return r.Addr() }

func (r redisStore) fill(v *target.Vars, proxy string) { v.RedisURL = "redis://" + proxy + "/0" }

func (r redisStore) restart(ctx context.Context, crash bool) error {
	return r.Bounce(ctx, crash, storeStartTimeout)
}

func (r redisStore) close(_ context.Context, log *slog.Logger, keep bool) error {
	if keep {
		log.Info("redis stopped; keep applies to the work dir only")
	}
	return r.Close()
}

func (r redisStore) held() Resources { return daemonHeld(r.PID(), r.Addr(), r.Dir()) }

// mysqlStore is a throwaway MariaDB with one database for the Env.
type mysqlStore struct {
	*mysqlserver.Server
	db string
}

func startMySQL(ctx context.Context, log *slog.Logger) (store, error) {
	s, err := mysqlserver.Start(ctx, mysqlserver.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	m := mysqlStore{Server: s, db: "idemcheck_" + strings.ToLower(harness.RandomHex(4))}
	if err := s.CreateDatabase(ctx, m.db); err != nil {
		s.Close()
		return nil, err
	}
	return m, nil
}

func (m mysqlStore) upstream() string { return m.Addr() }

func (m mysqlStore) fill(v *target.Vars, proxy string) {
	v.MySQLDSN, v.MySQLURL = mysqlserver.DSNAt(proxy, m.db), mysqlserver.URLAt(proxy, m.db)
}

func (m mysqlStore) restart(ctx context.Context, crash bool) error {
	return m.Bounce(ctx, crash, storeStartTimeout)
}

func (m mysqlStore) close(_ context.Context, log *slog.Logger, keep bool) error {
	if keep {
		log.Info("mysql stopped; keep applies to the work dir only")
	}
	return m.Close()
}

func (m mysqlStore) held() Resources { return daemonHeld(m.PID(), m.Addr(), m.Dir()) }

func daemonHeld(pid int, addr, dir string) Resources {
	var res Resources
	if pid != 0 {
		res.PIDs = []int{pid}
	}
	res.Ports = appendPort(nil, addr)
	res.Dirs = []string{dir}
	return res
}

// RestartStore stops the named store and starts it again on the same
// address and data, gracefully or (crash) with SIGKILL, and returns once it
// accepts connections. The replicas' links stay up: their connections
// break as they would against a real store restart.
func (e *Env) RestartStore(ctx context.Context, name string, crash bool) error {
	s, err := harness.PickStore(e.closed.Load(), e.stores, name)
	if err != nil {
		return err
	}
	if err := s.restart(ctx, crash); err != nil {
		return fmt.Errorf("restart %s: %w", name, err)
	}
	e.log.Info("store restarted", "store", name, "crash", crash)
	return nil
}

func (e *Env) closeStores() error {
	var errs []error
	for _, name := range target.Stores {
		if s, ok := e.stores[name]; ok {
			errs = append(errs, s.close(context.Background(), e.log, e.keep))
		}
	}
	return errors.Join(errs...)
}
