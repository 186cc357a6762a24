// Package redisserver starts a throwaway Redis from Debian's redis-server:
// a temporary directory, a free loopback port, persistence on as a real
// deployment runs it (appendonly yes, appendfsync everysec by default), so
// that a replica crash is not a store crash, and a graceful restart loses
// nothing. Stop removes it all; a run killed with SIGKILL leaves a folder
// that the next run sweeps (internal/leftovers).
//
// It imports internal/daemon, internal/freeport and internal/leftovers;
// harness/process and internal/redistest use it.
package redisserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/idemcheck/idemcheck/internal/daemon"
	"github.com/idemcheck/idemcheck/internal/freeport"
	"github.com/idemcheck/idemcheck/internal/leftovers"
)

// ErrNoBinary means redis-server was not found.
var ErrNoBinary = errors.New("redis-server not found (install Debian's redis-server, or set REDIS_SERVER)")

// Fsync policies of appendfsync (Redis's own names).
var Fsyncs = []string{"always", "everysec", "no"}

// Options configures Start. Zero values pick sensible defaults.
type Options struct {
	// Binary is redis-server; default $REDIS_SERVER, else the one on PATH.
	Binary string
	// Dir is the parent of the temporary directory; default os.TempDir().
	Dir string
	// AppendFsync is the AOF fsync policy: always, everysec (default) or no.
	AppendFsync string
	// Logger receives lifecycle messages; nil discards them.
	Logger *slog.Logger
	// StartTimeout bounds the wait for PONG; default 30s.
	StartTimeout time.Duration
}

// Server is a running throwaway Redis.
type Server struct {
	*daemon.Daemon
	port int
}

// Start creates and starts a server. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := findBinary(opts.Binary)
	if err != nil {
		return nil, err
	}
	if _, err := Args(0, "", "", opts.AppendFsync); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.Dir, "idemcheck-redis-")
	if err != nil {
		return nil, fmt.Errorf("redis: temp dir: %w", err)
	}
	_ = leftovers.Mark(dir)
	port, err := freeport.Port()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{port: port}
	args, _ := Args(port, "127.0.0.1", dir, opts.AppendFsync)
	s.Daemon = daemon.New(daemon.Spec{Name: "redis", Path: bin, Dir: dir, Home: dir, LogPath: filepath.Join(dir, "redis.log"),
		Args: args, Stop: syscall.SIGTERM, Ready: s.ping, Log: opts.Logger})
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if err := s.Launch(ctx, timeout); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Args is redis-server's command line as both modes run it (process mode
// here, container mode in the idemcheck/redis image): listening on port
// at bind, its append-only file in dir, persistence on with appendfsync
// fsync ("" is everysec, as most deployments run), no RDB snapshots.
// An unknown fsync policy is an error naming the ones Redis has.
func Args(port int, bind, dir, fsync string) ([]string, error) {
	if fsync == "" {
		fsync = "everysec"
	}
	if !slices.Contains(Fsyncs, fsync) {
		return nil, fmt.Errorf("redis: appendfsync %q: expected one of %s", fsync, strings.Join(Fsyncs, ", "))
	}
	return []string{"--port", strconv.Itoa(port), "--bind", bind, "--dir", dir, "--protected-mode", "no",
		"--appendonly", "yes", "--appendfsync", fsync, "--save", "", "--daemonize", "no", "--maxclients", "1000"}, nil
}

func (s *Server) ping(ctx context.Context) error { return Ping(ctx, s.Addr()) }

// Ping is PING in RESP on a fresh connection to addr: nil once the server
// says PONG (Redis answers LOADING while it replays its append-only file,
// and a port that accepts and closes, as Docker's proxy does before the
// server listens, is an error too).
func Ping(ctx context.Context, addr string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line = strings.TrimSpace(line); line != "+PONG" {
		return fmt.Errorf("redis: PING answered %q", line)
	}
	return nil
}

// Addr is host:port on loopback.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is redis://127.0.0.1:port/0.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Restart stops the server gracefully and starts it again on the same
// port and data.
func (s *Server) Restart(ctx context.Context) error { return s.Daemon.Restart(ctx, 30*time.Second) }

func findBinary(explicit string) (string, error) {
	for _, b := range []string{explicit, os.Getenv("REDIS_SERVER"), "redis-server"} {
		if b == "" {
			continue
		}
		if p, err := exec.LookPath(b); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBinary
}
