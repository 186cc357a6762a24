package faults_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/internal/pgtest"
)

// testEnv is a process-mode environment bound to a recorder of its own,
// with the process environment's inspection methods at hand.
type testEnv struct {
	faults.Env
	proc *process.Env
	rec  *history.Recorder
}

func TestMain(m *testing.M) {
	code := m.Run()
	harnesstest.Cleanup()
	pgtest.Stop()
	os.Exit(code)
}

// newEnv starts a one-replica environment around the test server; with
// postgres, on a fresh database of the shared test cluster.
func newEnv(t *testing.T, postgres bool) *testEnv {
	t.Helper()
	opts := harness.Options{Replicas: 1}
	if postgres {
		opts.DatabaseURL = pgtest.Cluster(t).URL()
	}
	proc := harnesstest.Start(t, harnesstest.Target(t, postgres, nil), opts)
	rec := history.NewRecorder(history.History{Target: "testserver"})
	return &testEnv{Env: faults.Bind(proc, rec, nil), rec: rec, proc: proc}
}

// result is one request's outcome as a client sees it.
type result struct {
	status  int
	body    string
	err     error
	elapsed time.Duration
}

// do sends a request on a fresh connection, so a link fault acts on
// exactly this request.
func do(req *http.Request, timeout time.Duration) result {
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return result{err: err, elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, body: string(b), err: err, elapsed: time.Since(start)}
}

func get(url string, timeout time.Duration) result {
	req, _ := http.NewRequest("GET", url, nil)
	return do(req, timeout)
}

func charge(base, key, order string, timeout time.Duration) result {
	body := fmt.Sprintf(`{"amount":1250,"currency":"usd","order_id":%q}`, order)
	req, _ := http.NewRequest("POST", base+"/v1/charges", strings.NewReader(body))
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	return do(req, timeout)
}

func mustOK(t *testing.T, what string, r result) {
	t.Helper()
	if r.err != nil || r.status/100 != 2 {
		t.Fatalf("%s: status %d body %q err %v", what, r.status, r.body, r.err)
	}
}

// apply injects f and fails the test on error; the heal is returned.
func apply(t *testing.T, env *testEnv, f faults.Fault) faults.HealFunc {
	t.Helper()
	heal, err := faults.Apply(context.Background(), env, f)
	if err != nil {
		t.Fatal(err)
	}
	return heal
}

func mustHeal(t *testing.T, heal faults.HealFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := heal(ctx); err != nil {
		t.Fatal(err)
	}
}

// recorded returns the faults in env's history with the given name.
func recorded(env *testEnv, name string) []history.Fault {
	var out []history.Fault
	for _, f := range env.rec.Snapshot(false).Faults {
		if f.Name == name {
			out = append(out, f)
		}
	}
	return out
}
