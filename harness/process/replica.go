package process

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

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/internal/boundedlog"
	"github.com/idemcheck/idemcheck/target"
)

// replica is one server replica: its fixed address and launch recipe, and
// the process currently running it (if any). The address never changes, so
// a restarted replica is reachable through the same client link.
type replica struct {
	idx     int
	addr    string // host:port the replica listens on
	logPath string
	out     *boundedlog.File // logPath, shared by every launch; nil before the first
	run     target.Rendered
	env     []string
	vars    target.Vars                                // as first rendered
	render  func(target.Vars) (target.Rendered, error) // the target's Render, for Relaunch
	launch  harness.Launch                             // what faults changed in it
	ready   target.Ready
	grace   time.Duration
	log     *slog.Logger

	mu     sync.Mutex // serialises Kill, Pause, Resume, Restart, stop
	proc   *process   // nil before the first start
	closed bool       // set by stop: a Restart racing with Close must not relaunch
}

func (r *replica) command() *exec.Cmd {
	cmd := exec.Command(r.run.Command, r.run.Args...)
	cmd.Dir, cmd.Env = r.run.Dir, r.env
	return cmd
}

// start launches the replica and waits for it to be ready. On failure the
// process is stopped again, so nothing outlives a failed start.
func (r *replica) start(ctx context.Context) error {
	if r.closed {
		return harness.ErrClosed
	}
	if r.out == nil {
		out, err := boundedlog.Create(r.logPath, 0, 0)
		if err != nil {
			return fmt.Errorf("replica %d: log: %w", r.idx, err)
		}
		r.out = out
	}
	p, err := launch(r.command(), r.out)
	if err != nil {
		return fmt.Errorf("replica %d: %w", r.idx, err)
	}
	r.proc = p
	r.log.Info("replica started", "replica", r.idx, "pid", p.pgid, "addr", r.addr)
	go r.watch(p)
	if err := r.waitReady(ctx, p); err != nil {
		_ = p.stop(r.grace)
		return err
	}
	return nil
}

// watch logs an exit nobody asked for: a crash of the SUT is evidence.
func (r *replica) watch(p *process) {
	<-p.exited
	r.log.Debug("replica exited", "replica", r.idx, "pid", p.pgid, "status", p.exitStatus())
}

// waitReady polls GET ready.Path on the replica's own address (not through
// its client link, so a fault on that link cannot fail a restart) until it
// answers 2xx, the process exits, ready.Timeout passes or ctx ends.
func (r *replica) waitReady(ctx context.Context, p *process) error {
	ctx, cancel := context.WithTimeoutCause(ctx, r.ready.Timeout, harness.ErrNotReady)
	defer cancel()
	err := harness.WaitReady(ctx, "http://"+r.addr+r.ready.Path, 20*time.Millisecond, p.exited)
	switch cause := context.Cause(ctx); {
	case err == nil:
		return nil
	case errors.Is(err, harness.ErrGone):
		return r.notReady("exited during start-up ("+p.exitStatus()+")", nil)
	case !errors.Is(cause, harness.ErrNotReady):
		// The caller gave up (a signal, the CLI's own deadline), which is
		// not the server's fault.
		return fmt.Errorf("replica %d: start-up abandoned: %w", r.idx, cause)
	}
	return r.notReady("not ready after "+r.ready.Timeout.String(), err)
}

func (r *replica) notReady(what string, cause error) error {
	msg := fmt.Sprintf("replica %d (%s) %s", r.idx, r.addr, what)
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return fmt.Errorf("%w: %s; log %s ends: %s", harness.ErrNotReady, msg, r.logPath, logTail(r.logPath, 10))
}

// live returns the running process or ErrNotRunning. Callers hold r.mu.
func (r *replica) live() (*process, error) {
	if r.proc == nil || !r.proc.alive() {
		return nil, fmt.Errorf("replica %d: %w", r.idx, harness.ErrNotRunning)
	}
	return r.proc, nil
}

func (r *replica) kill() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, err := r.live()
	if err != nil {
		return err
	}
	return p.kill()
}

// pause SIGSTOPs the group and returns once the kernel reports it stopped.
func (r *replica) pause(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, err := r.live()
	if err != nil {
		return err
	}
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	return waitFor(ctx, 5*time.Second, func() bool { st, ok := p.stopped(); return st || !ok })
}

func (r *replica) resume() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, err := r.live()
	if err != nil {
		return err
	}
	return p.signal(syscall.SIGCONT)
}

// restart stops a running process gracefully and starts a new one on the
// same address.
func (r *replica) restart(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc != nil {
		if err := r.proc.stop(r.grace); err != nil {
			return fmt.Errorf("replica %d: %w", r.idx, err)
		}
	}
	return r.start(ctx)
}

// relaunch stops a running process gracefully and starts a new one on
// the same address, rendered again with its Launch edited.
func (r *replica) relaunch(ctx context.Context, edit func(*harness.Launch)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.launch
	edit(&l)
	v, err := l.Apply(r.vars)
	if err != nil {
		return fmt.Errorf("replica %d: %w", r.idx, err)
	}
	run, err := r.render(v)
	if err != nil {
		return fmt.Errorf("replica %d: %w", r.idx, err)
	}
	r.launch, r.run, r.env = l, run, append(replicaEnviron(v, run.Env), l.Env(harness.HostLibFakeTime())...)
	if r.proc != nil {
		if err := r.proc.stop(r.grace); err != nil {
			return fmt.Errorf("replica %d: %w", r.idx, err)
		}
	}
	return r.start(ctx)
}

// stop ends the replica for good (Close).
func (r *replica) stop() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.proc == nil {
		return nil
	}
	err := r.proc.stop(r.grace)
	if r.out != nil {
		err = errors.Join(err, r.out.Close())
	}
	return err
}

func (r *replica) pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil || !r.proc.alive() {
		return 0
	}
	return r.proc.pgid
}

// waitFor polls cond until it holds, bounded by d and ctx.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// logTail is the last n lines of a log file, joined with " | ".
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
