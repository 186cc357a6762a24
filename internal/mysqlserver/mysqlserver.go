// Package mysqlserver starts a throwaway MySQL-compatible server from
// Debian's mariadb-server: mariadb-install-db into a temporary directory,
// mariadbd on a free loopback port, root without a password from
// 127.0.0.1 (every replica reaches it through a toxiproxy link on
// loopback). InnoDB keeps its redo log as a deployment would (a graceful
// restart loses nothing); the binary log is off. Stop removes it all; a
// run killed with SIGKILL leaves a folder that the next run sweeps.
//
// It imports internal/daemon, internal/freeport and internal/leftovers;
// harness/process and internal/mysqltest use it.
package mysqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idemcheck/idemcheck/internal/daemon"
	"github.com/idemcheck/idemcheck/internal/freeport"
	"github.com/idemcheck/idemcheck/internal/leftovers"
)

// ErrNoBinaries means mariadbd or mariadb-install-db was not found.
var ErrNoBinaries = errors.New("mariadbd not found (install Debian's mariadb-server, or set MARIADBD)")

// Options configures Start. Zero values pick sensible defaults.
type Options struct {
	// Dir is the parent of the temporary directory; default os.TempDir().
	Dir string
	// Logger receives lifecycle messages; nil discards them.
	Logger *slog.Logger
	// StartTimeout bounds the wait for a connection; default 60s.
	StartTimeout time.Duration
}

// Server is a running throwaway MariaDB.
type Server struct {
	*daemon.Daemon
	port int
}

// User is the account the DSNs name: root, no password, from 127.0.0.1.
const User = "root"

// Start creates and starts a server. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Server, error) {
	mariadbd, install, err := findBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.Dir, "idemcheck-mysql-")
	if err != nil {
		return nil, fmt.Errorf("mysql: temp dir: %w", err)
	}
	_ = leftovers.Mark(dir)
	s, err := start(ctx, dir, mariadbd, install, opts)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func start(ctx context.Context, dir, mariadbd, install string, opts Options) (*Server, error) {
	data := filepath.Join(dir, "data")
	cmd := exec.CommandContext(ctx, install, "--no-defaults", "--datadir="+data, "--user="+osUser(),
		"--auth-root-authentication-method=normal", "--skip-test-db", redoLog)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mysql: mariadb-install-db: %w: %s", err, daemon.LastLines(out, 5))
	}
	port, err := freeport.Port()
	if err != nil {
		return nil, err
	}
	s := &Server{port: port}
	args := Args(Config{DataDir: data, Socket: filepath.Join(dir, "mysqld.sock"), Port: port, Bind: "127.0.0.1",
		User: osUser(), LogError: filepath.Join(dir, "mysql.log")})
	s.Daemon = daemon.New(daemon.Spec{Name: "mysql", Path: mariadbd, Dir: dir, Home: dir, LogPath: filepath.Join(dir, "mysql.log"),
		Args: args, Stop: syscall.SIGTERM, Ready: s.ping, Log: opts.Logger})
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	if err := s.Launch(ctx, timeout); err != nil {
		return nil, err
	}
	return s, nil
}

// Config is where and as whom mariadbd runs.
type Config struct {
	DataDir, Socket string
	Port            int
	Bind            string // the address it listens on
	User            string // the OS user (as root, mariadbd must be told)
	LogError        string // the error log; "" is stderr
}

// Args is mariadbd's command line as both modes run it (process mode
// here, container mode in the idemcheck/mariadb image): no option files,
// clients known by address only (no DNS lookup per connection), no binary
// log, InnoDB's redo log kept as a deployment keeps it, sized small for a
// throwaway server (images/build.sh initialises the image's data directory
// with the same size).
func Args(c Config) []string {
	args := []string{"--no-defaults", "--datadir=" + c.DataDir, "--socket=" + c.Socket,
		"--port=" + strconv.Itoa(c.Port), "--bind-address=" + c.Bind, "--user=" + c.User, "--skip-name-resolve",
		"--skip-log-bin", "--max-connections=500", "--innodb-buffer-pool-size=64M", redoLog}
	if c.LogError != "" {
		args = append(args, "--log-error="+c.LogError)
	}
	return args
}

// redoLog is the size of InnoDB's redo log, the same at install and at
// every start (a change would make the next start rebuild it).
const redoLog = "--innodb-log-file-size=16M"

// osUser is the OS user mariadbd runs as: as root it must be told so.
func osUser() string {
	if os.Geteuid() == 0 {
		return "root"
	}
	return strconv.Itoa(os.Geteuid())
}

func (s *Server) ping(ctx context.Context) error { return Ping(ctx, s.Addr()) }

// Ping connects as User to the server at addr: nil once it accepts
// connections. The driver's own logger is silenced: a port that accepts
// and closes (Docker's proxy before the server listens) is an expected
// error while waiting, not news.
func Ping(ctx context.Context, addr string) error {
	db, err := open(addr, "")
	if err != nil {
		return err
	}
	defer db.Close()
	return db.PingContext(ctx)
}

// open is a pool on database db at addr, its errors returned, not logged.
func open(addr, db string) (*sql.DB, error) {
	c, err := mysql.ParseDSN(DSNAt(addr, db))
	if err != nil {
		return nil, err
	}
	c.Logger = quiet{}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}

type quiet struct{}

func (quiet) Print(...any) {}

// Addr is host:port on loopback.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// DSN is the go-sql-driver form for database db ("" for none) at addr
// (Addr when empty): root@tcp(addr)/db?parseTime=true.
func (s *Server) DSN(db string) string { return DSNAt(s.Addr(), db) }

// DSNAt is the DSN of database db on a server reached at addr (a proxy).
func DSNAt(addr, db string) string {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr, c.DBName, c.ParseTime = User, "tcp", addr, db, true
	return c.FormatDSN()
}

// URLAt is the mysql:// form of DSNAt.
func URLAt(addr, db string) string { return "mysql://" + User + "@" + addr + "/" + db }

var dbNameRE = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// CreateDatabase creates a database (lowercase letters, digits and '_').
func (s *Server) CreateDatabase(ctx context.Context, name string) error {
	return CreateDatabaseAt(ctx, s.Addr(), name)
}

// CreateDatabaseAt is CreateDatabase on the server at addr.
func CreateDatabaseAt(ctx context.Context, addr, name string) error {
	if !dbNameRE.MatchString(name) {
		return fmt.Errorf("mysql: database name %q: expected 1-64 of [a-z0-9_]", name)
	}
	db, err := open(addr, "")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		return fmt.Errorf("mysql: create database %s: %w", name, err)
	}
	return nil
}

// Restart stops the server gracefully and starts it again on the same
// port and data.
func (s *Server) Restart(ctx context.Context) error { return s.Daemon.Restart(ctx, 60*time.Second) }

func findBinaries() (mariadbd, install string, err error) {
	for _, c := range []string{os.Getenv("MARIADBD"), "/usr/sbin/mariadbd", "mariadbd"} {
		if p, lerr := exec.LookPath(c); c != "" && lerr == nil {
			mariadbd = p
			break
		}
	}
	install, ierr := exec.LookPath("mariadb-install-db")
	if mariadbd == "" || ierr != nil {
		return "", "", ErrNoBinaries
	}
	return mariadbd, install, nil
}
