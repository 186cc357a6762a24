package process_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/target"
)

// helperEnv makes the test binary act as a small idemcheck-like program:
// start an Env, report what it holds, wait for a signal.
const (
	helperEnv    = "IDEMCHECK_HARNESS_HELPER"
	helperBinEnv = "IDEMCHECK_HARNESS_HELPER_SERVER"
)

// helperReport is the one line the helper prints once its Env is up.
type helperReport struct {
	Resources process.Resources
	Kids      []int
}

// runHelper is the helper process's main: it mirrors what the CLI does
// (Start, defer Close, CloseOnSignal) and exits 130 when interrupted.
func runHelper() int {
	if os.Getenv(helperEnv) == "start" {
		return runStartHelper()
	}
	tgt := &target.Target{
		Name:   "testserver",
		Start:  target.Start{Command: os.Getenv(helperBinEnv), Env: map[string]string{"TESTSERVER_CHILD": "1"}},
		Needs:  []string{"postgres"},
		Policy: target.Policy{TTL: time.Hour},
	}
	ctx, stopStart := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopStart()
	env, err := process.Start(ctx, tgt, harness.Options{Logger: harnesstest.Logger()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer env.Close()
	ctx, stop := process.CloseOnSignal(ctx, env)
	defer stop()
	if err := report(env); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	<-ctx.Done() // a signal cancels it (via NotifyContext or CloseOnSignal, whichever is first)
	return 130
}

func report(env *process.Env) error {
	rep := helperReport{Resources: env.Resources()}
	for i := range env.Replicas() {
		resp, err := http.Get(env.ReplicaURL(i) + "/pids")
		if err != nil {
			return err
		}
		var p struct{ Child int }
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if err != nil {
			return err
		}
		rep.Kids = append(rep.Kids, p.Child)
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// TestCloseOnSignal_SIGINTLeavesNothingBehind runs the helper in a child
// process, interrupts it like a Ctrl-C would, and checks that the replicas,
// their children, PostgreSQL, every port and every directory are gone.
func TestCloseOnSignal_SIGINTLeavesNothingBehind(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { interruptHelper(t, sig) })
	}
}

func interruptHelper(t *testing.T, sig syscall.Signal) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", helperBinEnv+"="+harnesstest.TestServer(t))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var rep helperReport
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &rep) != nil {
		t.Fatalf("helper report %q: %v", line, err)
	}
	if len(rep.Resources.PIDs) != 3 || len(rep.Kids) != 2 {
		t.Fatalf("helper holds %+v", rep)
	}
	start := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, 130)
	t.Logf("%v to exit: %s", sig, time.Since(start))
	resourcesGone(t, rep.Resources, rep.Kids...)
}

func waitExit(t *testing.T, cmd *exec.Cmd, want int) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != want {
			t.Fatalf("helper exited with %v, want exit code %d", err, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("helper did not exit within 30s of the signal")
	}
}

// runStartHelper is a CLI interrupted during start-up: its Start runs under
// a signal.NotifyContext and a replica that never becomes ready.
func runStartHelper() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tgt := &target.Target{
		Name:   "testserver",
		Start:  target.Start{Command: os.Getenv(helperBinEnv), Env: map[string]string{"TESTSERVER_NOT_READY": "1", "TESTSERVER_CHILD": "1"}},
		Needs:  []string{"postgres"},
		Ready:  target.Ready{Timeout: time.Minute},
		Policy: target.Policy{TTL: time.Hour},
	}
	env, err := process.Start(ctx, tgt, harness.Options{Logger: harnesstest.Logger()})
	if err == nil {
		env.Close()
		return 0
	}
	fmt.Fprintln(os.Stderr, "helper:", err)
	if ctx.Err() != nil {
		return 130
	}
	return 3
}

// TestStart_SIGINTDuringStartUpLeavesNothingBehind interrupts a helper
// while its replicas are still being ready-checked: Start must notice the
// cancelled context and tear down PostgreSQL, the replicas and their
// children, and every temporary directory.
func TestStart_SIGINTDuringStartUpLeavesNothingBehind(t *testing.T) {
	tmp, err := os.MkdirTemp("", "idemcheck-sigtest-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o755) // PostgreSQL runs as its own user when we are root
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=start", helperBinEnv+"="+harnesstest.TestServer(t), "TMPDIR="+tmp)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var kids []int
	if !harnesstest.WaitUntil(60*time.Second, func() bool {
		kids = descendants(cmd.Process.Pid)
		return countComm(kids, "testserver") >= 4 && countComm(kids, "postgres") >= 1 // 2 replicas + their children
	}) {
		t.Fatalf("helper never got as far as starting replicas: %v", kids)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, 130)
	resourcesGone(t, process.Resources{}, kids...)
	assertEmptyDir(t, tmp)
}

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var p int
		if _, err := fmt.Sscan(e.Name(), &p); err != nil {
			continue
		}
		if pp := ppid(p); pp > 0 {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		next := children[queue[0]]
		queue = append(queue[1:], next...)
		out = append(out, next...)
	}
	return out
}

func ppid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	var state string
	var pp int
	if i < 0 {
		return 0
	}
	fmt.Sscan(s[i+1:], &state, &pp)
	return pp
}

func countComm(pids []int, comm string) int {
	n := 0
	for _, p := range pids {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p))
		if strings.TrimSpace(string(b)) == comm {
			n++
		}
	}
	return n
}
