package process_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/internal/pgtest"
	"github.com/idemcheck/idemcheck/ledger"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelper())
	}
	code := m.Run()
	harnesstest.Cleanup()
	pgtest.Stop()
	os.Exit(code)
}

// get fetches url with a client timeout and returns status and body.
func get(url string, timeout time.Duration) (int, string, error) {
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func mustGet(t *testing.T, url string) string {
	t.Helper()
	status, body, err := get(url, 10*time.Second)
	if err != nil || status != 200 {
		t.Fatalf("GET %s: %d %q %v", url, status, body, err)
	}
	return body
}

func TestEnv_StartsReplicasBehindLinks(t *testing.T) {
	tgt := harnesstest.Target(t, true, nil)
	admin := pgtest.Cluster(t).URL()
	start := time.Now()
	env := harnesstest.Start(t, tgt, harness.Options{DatabaseURL: admin})
	t.Logf("start-up with %d replicas on a running PostgreSQL (fresh database): %s", env.Replicas(), time.Since(start))
	defer func() {
		start := time.Now()
		env.Close()
		t.Logf("close (graceful SIGTERM, drop database): %s", time.Since(start))
	}()

	if env.Replicas() != 2 {
		t.Fatalf("replicas = %d, want the target default 2", env.Replicas())
	}
	for i := range env.Replicas() {
		mustGet(t, env.ReplicaURL(i)+"/healthz")
		if got := mustGet(t, env.ReplicaURL(i)+"/probe/gateway"); !strings.Contains(got, `"status":404`) {
			t.Errorf("replica %d gateway probe = %s, want the gateway's 404 for an unknown charge", i, got)
		}
		mustGet(t, env.ReplicaURL(i)+"/probe/db")
		if !strings.Contains(env.ReplicaURL(i), env.LinkAddr(harness.ClientLink(i))) {
			t.Errorf("ReplicaURL(%d) = %s does not go through %s", i, env.ReplicaURL(i), env.LinkAddr(harness.ClientLink(i)))
		}
	}
	if len(env.Links()) != 6 {
		t.Errorf("links = %v, want 3 per replica", env.Links())
	}
	log, err := os.ReadFile(env.LogPath(1))
	if err != nil || !strings.Contains(string(log), "testserver listening on http://"+env.ReplicaAddr(1)) {
		t.Errorf("replica 1 log = %q, %v", log, err)
	}
}

func TestEnv_LedgerFeedCatchesUpAtTheBarrier(t *testing.T) {
	env := harnesstest.Start(t, harnesstest.Target(t, false, nil), harness.Options{Replicas: 1})
	status, body := postCharge(t, env.ReplicaURL(0), "key-1", "ord_feed")
	if status != 201 {
		t.Fatalf("charge: %d %s", status, body)
	}
	feed := ledger.NewFeed(env.GatewayController())
	defer feed.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := feed.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	rec := history.NewRecorder(history.History{})
	var charges []history.Charge
	for _, ev := range feed.Order("ord_feed") {
		if c, ok := ledger.ChargeOf(ev, rec); ok {
			charges = append(charges, c)
		}
	}
	if len(charges) != 1 {
		t.Fatalf("charges after the barrier = %+v, want 1", charges)
	}
	c := charges[0]
	if c.Order != "ord_feed" || c.Amount != 1250 || c.Currency != "usd" || !c.Succeeded() || c.APIKey != env.GatewayAPIKey() || c.IdempotencyKey != "key-1" {
		t.Errorf("charge = %+v", c)
	}
}

func postCharge(t *testing.T, base, key, order string) (int, string) {
	t.Helper()
	body := fmt.Sprintf(`{"amount":1250,"currency":"usd","order_id":%q}`, order)
	req, _ := http.NewRequest("POST", base+"/v1/charges", strings.NewReader(body))
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestEnv_KillAndRestartOnTheSameAddress(t *testing.T) {
	env := harnesstest.Start(t, harnesstest.Target(t, false, nil), harness.Options{Replicas: 1})
	addr, pid := env.ReplicaAddr(0), env.PID(0)

	if err := env.Kill(0); err != nil {
		t.Fatal(err)
	}
	if env.Running(0) || harnesstest.Alive(pid) {
		t.Fatalf("replica still alive after Kill (pid %d)", pid)
	}
	if _, _, err := get(env.ReplicaURL(0)+"/healthz", 2*time.Second); err == nil {
		t.Fatal("request through the client link succeeded after Kill")
	}
	if err := env.Kill(0); !errors.Is(err, harness.ErrNotRunning) {
		t.Errorf("second Kill = %v, want harness.ErrNotRunning", err)
	}

	if err := env.Restart(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if env.ReplicaAddr(0) != addr || env.PID(0) == pid || env.PID(0) == 0 {
		t.Errorf("after restart addr %s pid %d, want addr %s and a new pid", env.ReplicaAddr(0), env.PID(0), addr)
	}
	mustGet(t, env.ReplicaURL(0)+"/healthz")
}

func TestEnv_RestartOfARunningReplicaIsGraceful(t *testing.T) {
	env := harnesstest.Start(t, harnesstest.Target(t, false, nil), harness.Options{Replicas: 1})
	pid := env.PID(0)
	if err := env.Restart(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if harnesstest.Alive(pid) || env.PID(0) == pid {
		t.Fatalf("old process %d still alive or reused", pid)
	}
	log, _ := os.ReadFile(env.LogPath(0))
	if !strings.Contains(string(log), "SIGTERM, shutting down") || strings.Count(string(log), "=== idemcheck: starting") != 2 {
		t.Errorf("log does not show a graceful stop and two launches:\n%s", log)
	}
	mustGet(t, env.ReplicaURL(0)+"/healthz")
}

func TestEnv_PauseHangsRequestsAndResumeCompletesThem(t *testing.T) {
	env := harnesstest.Start(t, harnesstest.Target(t, false, nil), harness.Options{Replicas: 1})
	if err := env.Pause(0); err != nil {
		t.Fatal(err)
	}
	_, _, err := get(env.ReplicaURL(0)+"/healthz", 300*time.Millisecond)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("request to a paused replica = %v, want a client timeout", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := get(env.ReplicaURL(0)+"/healthz", 10*time.Second)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("request completed while paused: %v", err)
	default:
	}
	if err := env.Resume(0); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("request after resume: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("request did not complete after resume")
	}
}

func TestEnv_StartFailsFastWhenTheServerExits(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tgt := harnesstest.Target(t, false, map[string]string{"TESTSERVER_FAIL": "1"})
	start := time.Now()
	_, err := process.Start(context.Background(), tgt, harness.Options{Logger: harnesstest.Logger()})
	if !errors.Is(err, harness.ErrNotReady) || !strings.Contains(err.Error(), "failing on purpose") {
		t.Fatalf("Start = %v, want harness.ErrNotReady with the log tail", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Start took %s to notice the exit; the ready timeout is 20s", d)
	}
	assertEmptyDir(t, tmp)
}

func TestEnv_StartTimesOutWhenNeverReady(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tgt := harnesstest.Target(t, false, map[string]string{"TESTSERVER_NOT_READY": "1"})
	tgt.Ready.Timeout = 300 * time.Millisecond
	_, err := process.Start(context.Background(), tgt, harness.Options{Logger: harnesstest.Logger(), Replicas: 1})
	if !errors.Is(err, harness.ErrNotReady) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("Start = %v, want harness.ErrNotReady naming the 503", err)
	}
	assertEmptyDir(t, tmp)
}

func TestEnv_BadDatabaseURLFailsBeforeAnythingRuns(t *testing.T) {
	tgt := harnesstest.Target(t, true, nil)
	_, err := process.Start(context.Background(), tgt, harness.Options{DatabaseURL: "host=localhost dbname=x"})
	if !errors.Is(err, harness.ErrDatabaseURL) {
		t.Fatalf("Start = %v, want harness.ErrDatabaseURL", err)
	}
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("left behind in %s: %s", dir, e.Name())
	}
}

func TestEnv_ProxyTogglesAndToxics(t *testing.T) {
	env := harnesstest.Start(t, harnesstest.Target(t, false, nil), harness.Options{Replicas: 1})
	l := harness.ClientLink(0)
	if err := env.SetLinkEnabled(l, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := get(env.ReplicaURL(0)+"/healthz", 2*time.Second); err == nil {
		t.Fatal("request succeeded through a disabled link")
	}
	if err := env.SetLinkEnabled(l, true); err != nil {
		t.Fatal(err)
	}
	mustGet(t, env.ReplicaURL(0)+"/healthz")

	err := env.AddToxic(l, harness.Toxic{Name: "x", Type: "no_such_toxic", Direction: harness.Downstream})
	if err == nil {
		t.Error("AddToxic accepted an unknown toxic type")
	}
	if _, err := env.Proxy("client->replica7"); !errors.Is(err, harness.ErrUnknownLink) {
		t.Errorf("Proxy(replica7) = %v, want harness.ErrUnknownLink", err)
	}
	if err := env.Kill(3); !errors.Is(err, harness.ErrNoReplica) {
		t.Errorf("Kill(3) = %v, want harness.ErrNoReplica", err)
	}
}

// resourcesGone waits (bounded) until no pid of res is alive and no port
// accepts connections, and checks every directory is removed.
func resourcesGone(t *testing.T, res process.Resources, extraPIDs ...int) {
	t.Helper()
	for _, pid := range append(res.PIDs, extraPIDs...) {
		if !harnesstest.WaitUntil(5*time.Second, func() bool { return !harnesstest.Alive(pid) }) {
			t.Errorf("process %d still alive", pid)
		}
	}
	for _, port := range res.Ports {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			t.Errorf("port %d still accepts connections", port)
		}
	}
	for _, dir := range res.Dirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("directory %s still exists (%v)", dir, err)
		}
	}
}

func childPID(t *testing.T, env *process.Env, i int) int {
	t.Helper()
	var p struct{ Child int }
	if err := json.Unmarshal([]byte(mustGet(t, env.ReplicaURL(i)+"/pids")), &p); err != nil || p.Child == 0 {
		t.Fatalf("child pid of replica %d: %v", i, err)
	}
	return p.Child
}

func TestEnv_CloseLeavesNothingBehind(t *testing.T) {
	tgt := harnesstest.Target(t, true, map[string]string{"TESTSERVER_CHILD": "1", "TESTSERVER_IGNORE_SIGTERM": "1"})
	start := time.Now()
	env, err := process.Start(context.Background(), tgt, harness.Options{Logger: harnesstest.Logger(), StopTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("start-up with 2 replicas and a throwaway PostgreSQL: %s", time.Since(start))
	res := env.Resources()
	kids := []int{childPID(t, env, 0), childPID(t, env, 1)}
	if len(res.PIDs) != 3 || len(res.Dirs) != 2 {
		t.Fatalf("resources = %+v, want 2 replicas + postmaster and 2 dirs", res)
	}

	start = time.Now()
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("close (replicas ignore SIGTERM, so SIGKILL after 500ms): %s", time.Since(start))
	resourcesGone(t, res, kids...)
	if err := env.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := env.Kill(0); !errors.Is(err, harness.ErrClosed) {
		t.Errorf("Kill after Close = %v, want harness.ErrClosed", err)
	}
}
