package harness_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
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
	Resources harness.Resources
	Kids      []int
}

// runHelper is the helper process's main: it mirrors what the CLI does
// (Start, defer Close, CloseOnSignal) and exits 130 when interrupted.
func runHelper() int {
	tgt := &target.Target{
		Name:   "testserver",
		Start:  target.Start{Command: os.Getenv(helperBinEnv), Env: map[string]string{"TESTSERVER_CHILD": "1"}},
		Needs:  []string{"postgres"},
		Policy: target.Policy{TTL: time.Hour},
	}
	env, err := harness.Start(context.Background(), tgt, harness.Options{Logger: harnesstest.Logger()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer env.Close()
	ctx, stop := harness.CloseOnSignal(context.Background(), env)
	defer stop()
	if err := report(env); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	<-ctx.Done()
	if errors.Is(context.Cause(ctx), harness.ErrInterrupted) {
		return 130
	}
	return 0
}

func report(env *harness.Env) error {
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
