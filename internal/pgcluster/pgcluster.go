// Package pgcluster starts a throwaway PostgreSQL cluster from the local
// server binaries: initdb into a temporary directory, postgres on a free
// loopback port, removed again on Stop. It is what tests and the harness use
// when no DATABASE_URL is given.
//
// PostgreSQL refuses to run as root, and CI runs as root: when the process
// is root, the cluster is created and run as the `postgres` OS user in a
// directory that user owns.
//
// It imports internal/freeport and internal/leftovers; harness/process and
// internal/pgtest use it.
package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idemcheck/idemcheck/internal/daemon"
	"github.com/idemcheck/idemcheck/internal/freeport"
	"github.com/idemcheck/idemcheck/internal/leftovers"
)

// ErrNoBinaries means no PostgreSQL server binaries were found.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries (set PG_BIN or install postgresql)")

// Options configures Start. Zero values pick sensible defaults.
type Options struct {
	// BinDir holds initdb and postgres; default $PG_BIN, else the newest
	// /usr/lib/postgresql/*/bin.
	BinDir string
	// Dir is the parent of the temporary data directory; default os.TempDir().
	Dir string
	// Logger receives lifecycle messages; nil discards them.
	Logger *slog.Logger
	// StartTimeout bounds how long Start waits for the server to accept
	// connections; default 60s.
	StartTimeout time.Duration
}

// Cluster is a running throwaway PostgreSQL.
type Cluster struct {
	*daemon.Daemon
	binDir string
	dir    string
	port   int
	cred   *syscall.Credential
	log    *slog.Logger

	stopOnce sync.Once
	stopErr  error
}

// Start creates and starts a cluster. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	bin, err := findBinDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cred, err := runAsCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.Dir, "idemcheck-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgcluster: temp dir: %w", err)
	}
	c := &Cluster{binDir: bin, dir: dir, cred: cred, log: log}
	_ = leftovers.Mark(dir) // a later run removes the cluster if this one is killed
	if err := c.start(ctx, opts.StartTimeout); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, timeout time.Duration) error {
	if c.cred != nil {
		if err := os.Chown(c.dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return fmt.Errorf("pgcluster: chown %s: %w", c.dir, err)
		}
	}
	if err := c.initdb(ctx); err != nil {
		return err
	}
	port, err := freeport.Port()
	if err != nil {
		return err
	}
	c.port = port
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	c.Daemon = daemon.New(daemon.Spec{Name: "postgres", Path: filepath.Join(c.binDir, "postgres"),
		Args: []string{"-D", c.dataDir(), "-p", strconv.Itoa(c.port), "-k", c.dir,
			"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
			"-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=300", "-c", "shared_buffers=128MB"},
		Dir: c.workDir(), LogPath: c.LogPath(), Cred: c.cred, Stop: syscall.SIGINT, // fast shutdown
		Ready: c.ping, Log: c.log})
	return c.Launch(ctx, timeout)
}

func (c *Cluster) ping(ctx context.Context) error { return Ping(ctx, c.URL()) }

// Ping connects to the server at url: nil once it accepts connections.
func Ping(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// workDir is where the server runs: as the postgres user, in the folder
// it owns.
func (c *Cluster) workDir() string {
	if c.cred != nil {
		return c.dir
	}
	return ""
}

func (c *Cluster) initdb(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, "initdb"),
		"-D", c.dataDir(), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	c.asUser(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgcluster: initdb: %w: %s", err, daemon.LastLines(out, 5))
	}
	return nil
}

// URL is the connection string of the cluster's default database.
func (c *Cluster) URL() string { return c.urlFor("postgres") }

func (c *Cluster) urlFor(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// CreateDatabase creates a fresh database and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		return "", fmt.Errorf("pgcluster: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgcluster: create database %q: %w", name, err)
	}
	return c.urlFor(name), nil
}

// BinDir is the directory of the server binaries (pgbench lives there too).
func (c *Cluster) BinDir() string { return c.binDir }

// Port is the loopback TCP port the server listens on.
func (c *Cluster) Port() int { return c.port }

// LogPath is the server's log file, kept until Stop.
func (c *Cluster) LogPath() string { return filepath.Join(c.dir, "postgres.log") }

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }

// Stop shuts the server down (fast shutdown, then SIGKILL after 10s) and
// removes its directory. It is safe to call more than once.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		var err error
		if c.Daemon != nil {
			err = c.Daemon.Stop(daemon.DefaultGrace)
		}
		c.stopErr = errors.Join(err, os.RemoveAll(c.dir))
	})
	return c.stopErr
}

// Restart stops the server (fast shutdown) and starts it again on the
// same port and data.
func (c *Cluster) Restart(ctx context.Context) error { return c.Daemon.Restart(ctx, 60*time.Second) }

func (c *Cluster) asUser(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if c.cred != nil {
		cmd.SysProcAttr.Credential = c.cred
		cmd.Dir = c.dir
	}
}

// runAsCredential returns the postgres user's credential when we are root.
func runAsCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgcluster: running as root needs a `postgres` OS user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func findBinDir(explicit string) (string, error) {
	candidates := []string{explicit, os.Getenv("PG_BIN")}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(found, func(i, j int) bool { return versionOf(found[i]) > versionOf(found[j]) })
	candidates = append(candidates, found...)
	for _, dir := range candidates {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	return "", ErrNoBinaries
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}
