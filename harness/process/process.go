package process

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one launch of a replica: a child in its own process group, so
// that a signal reaches whatever the server spawned (a shell wrapper, a
// worker pool) and a Ctrl-C at the terminal reaches the harness first.
type process struct {
	cmd    *exec.Cmd
	pgid   int
	exited chan struct{} // closed once the leader has been reaped
	err    error         // Wait's result, valid after exited
}

// outputDrain bounds how long Wait copies a killed process's output
// after it exited: a grandchild that escaped its group and holds the
// pipe must not hold the replica's restart.
const outputDrain = 2 * time.Second

// launch starts cmd with its output appended to out (the replica's
// bounded log, through a pipe).
func launch(cmd *exec.Cmd, out io.Writer) (*process, error) {
	fmt.Fprintf(out, "=== idemcheck: starting %s at %s ===\n", cmd.Path, time.Now().Format(time.RFC3339Nano))
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = out, out, outputDrain
	// Pdeathsig is the last line of defence: if the harness itself is
	// SIGKILLed, the kernel kills the direct child.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	p := &process{cmd: cmd, pgid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// signal sends sig to the whole process group.
func (p *process) signal(sig syscall.Signal) error {
	if err := syscall.Kill(-p.pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to process group %d: %w", sig, p.pgid, err)
	}
	return nil
}

func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// wait waits up to d for the leader to exit.
func (p *process) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// kill SIGKILLs the group and waits for the leader to be reaped. A
// SIGKILLed process cannot refuse; the bound only guards against a process
// stuck in the kernel (D state).
func (p *process) kill() error {
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	if !p.wait(10 * time.Second) {
		return fmt.Errorf("process %d did not die after SIGKILL", p.pgid)
	}
	return p.signal(syscall.SIGKILL) // stragglers that left the leader behind
}

// stop asks the group to terminate (SIGTERM, and SIGCONT in case it is
// paused: a stopped process cannot act on SIGTERM), escalating to SIGKILL
// after grace.
func (p *process) stop(grace time.Duration) error {
	if !p.alive() {
		return p.signal(syscall.SIGKILL)
	}
	if err := p.signal(syscall.SIGTERM); err != nil {
		return err
	}
	_ = p.signal(syscall.SIGCONT)
	if p.wait(grace) {
		return p.signal(syscall.SIGKILL)
	}
	return p.kill()
}

// stopped reports whether the leader is in the stopped state ('T'), read
// from /proc; ok is false where /proc is unavailable.
func (p *process) stopped() (stopped, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pgid) + "/stat")
	if err != nil {
		return false, false
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain spaces or parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false, false
	}
	st := s[i+2]
	return st == 'T' || st == 't', true
}

func (p *process) exitStatus() string {
	if p.alive() {
		return "running"
	}
	if p.err == nil {
		return "exit status 0"
	}
	return p.err.Error()
}
