package process

import (
	"context"
	"fmt"

	"github.com/idemcheck/idemcheck/harness"
)

// replica returns replica i, or an error for a closed Env or a bad index.
func (e *Env) replica(i int) (*replica, error) {
	return harness.Pick(e.closed.Load(), e.replicas, i)
}

// Kill SIGKILLs replica i's process group and returns once the process is
// reaped: when Kill returns, the replica is gone and its port is closed.
// Killing a replica that is not running is ErrNotRunning.
func (e *Env) Kill(i int) error {
	r, err := e.replica(i)
	if err != nil {
		return err
	}
	if err := r.kill(); err != nil {
		return fmt.Errorf("kill replica %d: %w", i, err)
	}
	e.log.Info("replica killed", "replica", i)
	return nil
}

// Pause SIGSTOPs replica i's process group and returns once the kernel
// reports it stopped: its sockets stay open, so requests hang instead of
// failing, which is what a long GC pause or a frozen VM looks like.
func (e *Env) Pause(i int) error {
	r, err := e.replica(i)
	if err != nil {
		return err
	}
	if err := r.pause(context.Background()); err != nil {
		return fmt.Errorf("pause replica %d: %w", i, err)
	}
	e.log.Info("replica paused", "replica", i)
	return nil
}

// Resume SIGCONTs replica i's process group.
func (e *Env) Resume(i int) error {
	r, err := e.replica(i)
	if err != nil {
		return err
	}
	if err := r.resume(); err != nil {
		return fmt.Errorf("resume replica %d: %w", i, err)
	}
	e.log.Info("replica resumed", "replica", i)
	return nil
}

// Restart relaunches replica i on the same address and waits for it to be
// ready. A running replica is stopped gracefully first (SIGTERM, SIGKILL
// after the stop timeout); a killed one is simply started.
func (e *Env) Restart(ctx context.Context, i int) error {
	r, err := e.replica(i)
	if err != nil {
		return err
	}
	if err := r.restart(ctx); err != nil {
		return fmt.Errorf("restart replica %d: %w", i, err)
	}
	e.log.Info("replica restarted", "replica", i, "pid", r.pid())
	return nil
}

// Relaunch edits replica i's Launch, stops it gracefully and starts it
// again on the same address rendered that way (a FAKETIME, a time zone in
// its store URLs), and waits for it to be ready; later restarts keep it.
func (e *Env) Relaunch(ctx context.Context, i int, edit func(*harness.Launch)) error {
	r, err := e.replica(i)
	if err != nil {
		return err
	}
	if err := r.relaunch(ctx, edit); err != nil {
		return fmt.Errorf("relaunch replica %d: %w", i, err)
	}
	e.log.Info("replica relaunched", "replica", i, "pid", r.pid())
	return nil
}

// Running reports whether replica i has a live process (it may be paused).
func (e *Env) Running(i int) bool {
	r, err := e.replica(i)
	return err == nil && r.pid() != 0
}

// PID is the process (and process group) id of replica i, 0 when it is not
// running.
func (e *Env) PID(i int) int {
	r, err := e.replica(i)
	if err != nil {
		return 0
	}
	return r.pid()
}
