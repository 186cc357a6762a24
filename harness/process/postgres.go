package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/internal/pgcluster"
	"github.com/idemcheck/idemcheck/target"
)

// database is the Env's PostgreSQL: the server (a throwaway cluster or the
// one Options.DatabaseURL names) and the fresh database created in it.
type database struct {
	cluster *pgcluster.Cluster // nil when Options.DatabaseURL was given
	admin   string             // URL used to create and drop the database
	url     string             // the Env's own database, direct
	name    string
	created bool // false when we fell back to the admin database itself
}

// startDatabase starts a throwaway cluster unless adminURL is set, then
// creates a database no other Env uses. Without CREATEDB privilege on a
// given server it falls back to the given database: every example uses
// fresh tenants and keys, so sharing it is safe, only less tidy.
func startDatabase(ctx context.Context, adminURL string, log *slog.Logger) (*database, error) {
	db := &database{admin: adminURL}
	if adminURL == "" {
		c, err := pgcluster.Start(ctx, pgcluster.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		db.cluster, db.admin = c, c.URL()
	}
	if err := db.create(ctx, log); err != nil {
		db.close(context.Background(), log, false)
		return nil, err
	}
	return db, nil
}

func (db *database) create(ctx context.Context, log *slog.Logger) error {
	db.name = fmt.Sprintf("idemcheck_%d_%s", os.Getpid(), harness.RandomHex(4))
	u, err := withDatabase(db.admin, db.name)
	if err != nil {
		return err
	}
	err = execAdmin(ctx, db.admin, "CREATE DATABASE "+pgx.Identifier{db.name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
		log.Warn("no CREATEDB privilege: sharing the given database", "url", redact(db.admin))
		db.url, db.name = db.admin, ""
		return nil
	}
	if err != nil {
		return fmt.Errorf("postgres: create database: %w", err)
	}
	db.url, db.created = u, true
	return nil
}

// close drops the database (unless keep) and stops a throwaway cluster. A
// throwaway cluster is removed whole, so its database is not dropped first.
func (db *database) close(ctx context.Context, log *slog.Logger, keep bool) error {
	if db.cluster != nil {
		if keep {
			log.Info("postgres cluster stopped; keep applies to the work dir only")
		}
		return db.cluster.Stop()
	}
	if !db.created || keep {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	sql := "DROP DATABASE IF EXISTS " + pgx.Identifier{db.name}.Sanitize() + " WITH (FORCE)"
	if err := execAdmin(ctx, db.admin, sql); err != nil {
		return fmt.Errorf("postgres: drop database %s: %w", db.name, err)
	}
	return nil
}

func execAdmin(ctx context.Context, adminURL, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

func (db *database) upstream() string {
	hp, _ := db.hostPort() // validated at start
	return hp
}

func (db *database) fill(v *target.Vars, proxy string) { v.DatabaseURL = db.viaProxy(proxy) }

// restart restarts a throwaway cluster; an external server is not ours to
// restart.
func (db *database) restart(ctx context.Context, crash bool) error {
	if db.cluster == nil {
		return fmt.Errorf("%w: an external PostgreSQL (DATABASE_URL) cannot be restarted", harness.ErrNoStore)
	}
	return db.cluster.Bounce(ctx, crash, storeStartTimeout)
}

func (db *database) held() Resources {
	if db.cluster == nil {
		return Resources{}
	}
	return Resources{PIDs: db.pids(), Ports: []int{db.cluster.Port()}, Dirs: []string{db.dir()}}
}

// hostPort is where the database server listens: the upstream of every
// replica's postgres link.
func (db *database) hostPort() (string, error) {
	u, err := parsePGURL(db.url)
	if err != nil {
		return "", err
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// viaProxy is the database URL with host:port replaced by a proxy address.
func (db *database) viaProxy(proxyAddr string) string {
	u, _ := parsePGURL(db.url) // validated by hostPort at start
	u.Host = proxyAddr
	return u.String()
}

// pids lists the throwaway cluster's postmaster, read from postmaster.pid,
// so a leak check can prove it gone. Empty for an external server.
func (db *database) pids() []int {
	if db.cluster == nil {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(db.dir(), "data", "postmaster.pid"))
	if err != nil {
		return nil
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return nil
	}
	return []int{pid}
}

func (db *database) dir() string {
	if db.cluster == nil {
		return ""
	}
	return filepath.Dir(db.cluster.LogPath())
}

func parsePGURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("%w: want postgres://user@host:port/db, got %q", harness.ErrDatabaseURL, redact(s))
	}
	if u.Hostname() == "" || strings.Contains(u.Host, ",") {
		return nil, fmt.Errorf("%w: want exactly one TCP host (toxiproxy sits in front of it), got %q", harness.ErrDatabaseURL, redact(s))
	}
	return u, nil
}

func withDatabase(adminURL, name string) (string, error) {
	u, err := parsePGURL(adminURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

// redact hides a password in a URL for logs and errors.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<unparsable URL>"
	}
	return u.Redacted()
}
