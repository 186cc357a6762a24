// Package daemon runs one throwaway server process for the harness and the
// tests: PostgreSQL (internal/pgcluster), Redis (internal/redisserver),
// MariaDB (internal/mysqlserver). It owns what they share: the process in
// its own process group (a Ctrl-C at the terminal reaches idemcheck first,
// which then stops it in order), killed by the kernel if idemcheck itself
// is SIGKILLed (Pdeathsig), its output in a log file (clipped to its head
// and tail before each launch, internal/boundedlog), a bounded wait for
// readiness that gives up early when the process exits, and a stop that
// sends the server's graceful signal and SIGKILLs the group after a grace.
//
// A Daemon can be stopped or killed and launched again with the same
// command line (same port, same data directory): the store faults restart
// a store mid-run to show what a server does when its store goes away.
//
// It imports internal/boundedlog alone.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/idemcheck/idemcheck/internal/boundedlog"
)

// Spec is how to run the server.
type Spec struct {
	Name    string   // for logs and errors: "postgres", "redis", "mysql"
	Path    string   // the executable
	Args    []string // its arguments
	Dir     string   // working directory ("" = inherit)
	LogPath string   // stdout and stderr of every launch are appended here, clipped before each
	// Cred runs the server as another user (PostgreSQL refuses root).
	Cred *syscall.Credential
	// Stop is the signal of a graceful shutdown: SIGINT is PostgreSQL's
	// fast shutdown, SIGTERM Redis's and MariaDB's.
	Stop syscall.Signal
	// Home is the folder the server keeps its data and log in, which Close
	// removes ("" for none).
	Home string
	// Ready reports nil once the server accepts work.
	Ready func(ctx context.Context) error
	// Log receives lifecycle messages; nil discards them.
	Log *slog.Logger
}

// DefaultGrace is how long Stop waits after the graceful signal before it
// kills the process group.
const DefaultGrace = 10 * time.Second

// Daemon is a server process that can be launched again.
type Daemon struct {
	spec Spec

	mu     sync.Mutex
	cmd    *exec.Cmd
	waited chan struct{} // closed when the current launch has exited
}

// New prepares a daemon; Launch starts it.
func New(spec Spec) *Daemon {
	if spec.Log == nil {
		spec.Log = slog.New(slog.DiscardHandler)
	}
	if spec.Stop == 0 {
		spec.Stop = syscall.SIGTERM
	}
	return &Daemon{spec: spec}
}

// Launch starts the process and waits up to timeout for Ready. On error
// the process is killed again.
func (d *Daemon) Launch(ctx context.Context, timeout time.Duration) error {
	if err := d.start(); err != nil {
		return err
	}
	if err := d.waitReady(ctx, timeout); err != nil {
		d.Kill()
		return err
	}
	return nil
}

func (d *Daemon) start() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running() {
		return fmt.Errorf("%s: already running", d.spec.Name)
	}
	// The server appends to the file itself (a pipe would make a SIGKILLed
	// postmaster's orphaned backends hold cmd.Wait): the log is bounded
	// between launches, when nothing writes it. A store restarted by a
	// soak's strikes keeps its head and its latest launches.
	if err := boundedlog.ClipFile(d.spec.LogPath); err != nil {
		return fmt.Errorf("%s: log file: %w", d.spec.Name, err)
	}
	logf, err := os.OpenFile(d.spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: log file: %w", d.spec.Name, err)
	}
	cmd := exec.Command(d.spec.Path, d.spec.Args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = d.spec.Dir, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: d.spec.Cred}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("%s: start %s: %w", d.spec.Name, d.spec.Path, err)
	}
	waited := make(chan struct{})
	d.cmd, d.waited = cmd, waited
	go func() {
		cmd.Wait()
		logf.Close()
		close(waited)
	}()
	d.spec.Log.Info(d.spec.Name+" started", "pid", cmd.Process.Pid, "log", d.spec.LogPath)
	return nil
}

func (d *Daemon) running() bool {
	if d.cmd == nil {
		return false
	}
	select {
	case <-d.waited:
		return false
	default:
		return true
	}
}

func (d *Daemon) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d.mu.Lock()
	waited := d.waited
	d.mu.Unlock()
	var last error
	for {
		if last = d.spec.Ready(ctx); last == nil {
			return nil
		}
		select {
		case <-waited:
			return fmt.Errorf("%s exited during start-up: %s", d.spec.Name, d.LogTail(5))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %w", d.spec.Name, timeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// PID is the running process's pid, 0 when it is not running.
func (d *Daemon) PID() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.running() {
		return 0
	}
	return d.cmd.Process.Pid
}

// Stop sends the graceful signal and waits up to grace (DefaultGrace when
// zero), then kills the process group. Stopping a stopped daemon is a
// no-op.
func (d *Daemon) Stop(grace time.Duration) error {
	if grace <= 0 {
		grace = DefaultGrace
	}
	return d.signal(d.spec.Stop, grace)
}

// Restart stops the server gracefully and launches it again on the same
// command line (same port, same data), waiting up to timeout for Ready.
func (d *Daemon) Restart(ctx context.Context, timeout time.Duration) error {
	if err := d.Stop(0); err != nil {
		return err
	}
	return d.Launch(ctx, timeout)
}

// Bounce starts the server again on the same command line after stopping
// it gracefully, or (crash) with SIGKILL, losing what it had not made
// durable; it waits up to timeout for Ready. The store faults call it.
func (d *Daemon) Bounce(ctx context.Context, crash bool, timeout time.Duration) error {
	if !crash {
		return d.Restart(ctx, timeout)
	}
	if err := d.Kill(); err != nil {
		return err
	}
	return d.Launch(ctx, timeout)
}

// Dir is Spec.Home: the server's data and log.
func (d *Daemon) Dir() string { return d.spec.Home }

// Close stops the server and removes Spec.Home. Safe to call twice.
func (d *Daemon) Close() error {
	err := d.Stop(0)
	if d.spec.Home == "" {
		return err
	}
	return errors.Join(err, os.RemoveAll(d.spec.Home))
}

// Kill is SIGKILL to the process group: the store crashes, losing what it
// had not made durable. It returns once the process has exited.
func (d *Daemon) Kill() error { return d.signal(syscall.SIGKILL, DefaultGrace) }

func (d *Daemon) signal(sig syscall.Signal, grace time.Duration) error {
	d.mu.Lock()
	cmd, waited := d.cmd, d.waited
	d.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-waited:
		return nil
	default:
	}
	pid := cmd.Process.Pid
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%s: signal %s: %w", d.spec.Name, sig, err)
	}
	select {
	case <-waited:
	case <-time.After(grace):
		syscall.Kill(-pid, syscall.SIGKILL)
		<-waited
	}
	syscall.Kill(-pid, syscall.SIGKILL) // children left in the group
	d.spec.Log.Info(d.spec.Name+" stopped", "pid", pid, "signal", sig.String())
	return nil
}

// LogTail is the last n lines of the log, joined with " | ", for errors.
func (d *Daemon) LogTail(n int) string {
	b, _ := os.ReadFile(d.spec.LogPath)
	return LastLines(b, n)
}

// LastLines is the last n lines of b, joined with " | ".
func LastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
