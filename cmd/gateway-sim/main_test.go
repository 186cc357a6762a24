package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

const waitBound = 10 * time.Second

// TestMain lets a test re-run this test binary as the real command, so the
// signal handling in main() itself is exercised without a go build.
func TestMain(m *testing.M) {
	if os.Getenv("GATEWAY_SIM_RUN_MAIN") == "1" {
		os.Args = append([]string{"gateway-sim"}, strings.Fields(os.Getenv("GATEWAY_SIM_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// baseURLs reads the banner, the "listening on" and "control on" lines,
// and returns the provider API's URL and the control API's.
func baseURLs(t *testing.T, r io.Reader) (data, control string) {
	t.Helper()
	br := bufio.NewReader(r)
	var urls []string
	for _, prefix := range []string{"gateway-sim listening on ", "gateway-sim control on "} {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read banner: %v", err)
		}
		url, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
		if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Fatalf("banner %q, want %q...", line, prefix)
		}
		urls = append(urls, url)
	}
	return urls[0], urls[1]
}

// freeAddrs are the flags that put both listeners on ports the kernel
// picks.
const freeAddrs = "--addr 127.0.0.1:0 --control-addr 127.0.0.1:0"

func TestBinary_ServesAndStopsOnSIGTERM(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "GATEWAY_SIM_RUN_MAIN=1", "GATEWAY_SIM_ARGS="+freeAddrs+" --seed 3 --ttl 1h")
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		url, _ := baseURLs(t, stdout)
		resp, err := http.Post(url+"/v1/charges", "application/x-www-form-urlencoded", strings.NewReader("amount=100&currency=usd"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("unauthenticated charge: %d", resp.StatusCode)
		}
		_ = cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%v: exit %v", sig, err)
			}
		case <-time.After(waitBound):
			_ = cmd.Process.Kill()
			t.Fatalf("%v: still running", sig)
		}
	}
}

// Shutdown must not wait forever on handlers that never return by
// themselves: an open event stream and a held response.
func TestRun_ShutdownWithOpenStreamAndHold(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	finished := make(chan error, 1)
	go func() { finished <- run(ctx, strings.Fields(freeAddrs), pw, io.Discard) }()
	url, control := baseURLs(t, pr)

	streamCtx, streamDone := context.WithTimeout(context.Background(), waitBound)
	defer streamDone()
	req, _ := http.NewRequestWithContext(streamCtx, http.MethodGet, control+"/_sim/events", nil)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	mustPost(t, control+"/_sim/faults", `{"kind":"charge_then_hang"}`, 201)
	held := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/charges", strings.NewReader("amount=100&currency=usd"))
		req.Header.Set("Authorization", "Bearer sk_test_x")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			held <- 0
			return
		}
		resp.Body.Close()
		held <- resp.StatusCode
	}()
	waitForHold(t, stream.Body)
	cancel()
	select {
	case err := <-finished:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitBound):
		t.Fatal("run did not return after cancel")
	}
	if code := <-held; code != 200 {
		t.Fatalf("held charge answered %d on shutdown", code)
	}
}

func mustPost(t *testing.T, url, body string, want int) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("POST %s: %d, want %d", url, resp.StatusCode, want)
	}
}

// waitForHold reads the SSE stream until a hold event; the stream's
// context bounds the wait.
func waitForHold(t *testing.T, r io.Reader) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `"type":"hold"`) {
			return
		}
	}
	t.Fatalf("stream ended before a hold event: %v", sc.Err())
}

func TestRun_BadFlags(t *testing.T) {
	var stderr bytes.Buffer
	for _, args := range [][]string{{"--ttl", "soon"}, {"--bogus"}, {"extra"}} {
		err := run(context.Background(), args, io.Discard, &stderr)
		if !errors.Is(err, errUsage) {
			t.Fatalf("%v: err = %v", args, err)
		}
	}
	if err := run(context.Background(), []string{"--addr", "256.0.0.1:1"}, io.Discard, &stderr); err == nil || errors.Is(err, errUsage) {
		t.Fatalf("unusable address: %v", err)
	}
	if err := run(context.Background(), []string{"--addr", "127.0.0.1:0", "--control-addr", "256.0.0.1:1"}, io.Discard, &stderr); err == nil || !strings.Contains(err.Error(), "control") {
		t.Fatalf("unusable control address: %v", err)
	}
}

// --provider names a profile; an unknown one is a usage error that lists
// the profiles, and the simulator speaks the one named.
func TestRun_Provider(t *testing.T) {
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"--provider", "braintree"}, io.Discard, &stderr); !errors.Is(err, errUsage) {
		t.Fatalf("unknown provider: %v", err)
	}
	if !strings.Contains(stderr.String(), "adyen, checkout, none, stripe") {
		t.Fatalf("stderr %q does not list the profiles", stderr.String())
	}
	banner, stop := serving(t, "--provider", "checkout")
	url, _ := baseURLs(t, banner)
	req, _ := http.NewRequest(http.MethodPost, url+"/payments", strings.NewReader(
		`{"amount":100,"currency":"USD","reference":"ord_1","source":{"type":"token","token":"tok_visa"}}`))
	req.Header.Set("Authorization", "sk_test")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("a Checkout.com payment: %d, want 201", resp.StatusCode)
	}
	stop()
}

// serving runs the command on free ports with args besides, and returns
// its banner and what stops it (and fails the test if it did not stop
// cleanly).
func serving(t *testing.T, args ...string) (*bufio.Reader, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	finished := make(chan error, 1)
	go func() { finished <- run(ctx, append(strings.Fields(freeAddrs), args...), pw, io.Discard) }()
	return bufio.NewReader(pr), func() {
		t.Helper()
		cancel()
		if err := <-finished; err != nil {
			t.Fatal(err)
		}
	}
}

// The control API is served on its own listener alone: on the provider's
// address, /_sim/... is a path the provider does not have, answered with
// its own 404 (Stripe's error object here), and nothing is reset.
func TestRun_ControlAPIOnItsOwnListener(t *testing.T) {
	banner, stop := serving(t)
	url, control := baseURLs(t, banner)
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, "/_sim/reset"}, {http.MethodDelete, "/_sim/faults"}, {http.MethodGet, "/_sim/ledger"},
	} {
		req, _ := http.NewRequest(c.method, url+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "Unrecognized request URL ("+c.method+": "+c.path+")") {
			t.Errorf("%s %s on the provider's address: %d %s, want Stripe's 404", c.method, c.path, resp.StatusCode, body)
		}
	}
	resp, err := http.Get(control + "/_sim/ledger")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /_sim/ledger on the control address: %d", resp.StatusCode)
	}
	stop()
}

// --via serves the provider's API on one more address, and names it in
// what the gateway records of a request that is not its API.
func TestRun_Via(t *testing.T) {
	br, stop := serving(t, "--via", "replica0->gateway=127.0.0.1:0")
	_, control := baseURLs(t, br)
	line, err := br.ReadString('\n')
	via, ok := strings.CutPrefix(strings.TrimSpace(line), "gateway-sim via replica0->gateway on ")
	if err != nil || !ok {
		t.Fatalf("banner %q, %v", line, err)
	}
	resp, err := http.Post(via+"/_sim/reset", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("POST /_sim/reset via the link: %d, want 404", resp.StatusCode)
	}
	events, err := http.Get(control + "/_sim/events?since=0&wait=5s")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(events.Body)
	events.Body.Close()
	if !strings.Contains(string(body), `"type":"foreign"`) || !strings.Contains(string(body), `"via":"replica0-\u003egateway"`) {
		t.Fatalf("events %s, want the foreign request via replica0->gateway", body)
	}
	if err := run(context.Background(), []string{"--via", "nameless"}, io.Discard, io.Discard); !errors.Is(err, errUsage) {
		t.Fatalf("--via without an address: %v", err)
	}
	stop()
}

// A retention, by --forget-after or the control API's POST /_sim/forget
// (what the container-mode harness calls), makes the gateway forget a
// charge once a newer one comes more than the retention later, and
// keeps it until then; a bad value names the flag (exit 2) or is a 400.
func TestRun_ForgetAfter(t *testing.T) {
	const retain = time.Second
	for _, byFlag := range []bool{true, false} {
		var args []string
		if byFlag {
			args = []string{"--forget-after", retain.String()}
		}
		banner, stop := serving(t, args...)
		url, control := baseURLs(t, banner)
		if !byFlag {
			if err := gatewaysim.NewClient(control).ForgetAfter(context.Background(), retain); err != nil {
				t.Fatal(err)
			}
		}
		before := time.Now()
		old := postCharge(t, url)
		postCharge(t, url)
		if got := getCharge(t, url, old); time.Since(before) < retain && got != http.StatusOK {
			t.Fatalf("flag %v: GET a charge within the retention: %d, want 200", byFlag, got)
		}
		deadline := time.Now().Add(waitBound)
		for getCharge(t, url, old) != http.StatusNotFound {
			if time.Now().After(deadline) {
				t.Fatalf("flag %v: the charge is still kept %s after it was made, with a retention of %s", byFlag, waitBound, retain)
			}
			time.Sleep(50 * time.Millisecond) // poll: a newer charge comes now and then
			postCharge(t, url)
		}
		if d := time.Since(before); d < retain {
			t.Fatalf("flag %v: the charge was forgotten %s after it was made, before the retention of %s", byFlag, d, retain)
		}
		if byFlag {
			mustPost(t, control+"/_sim/forget", `{"after_ms":-1}`, http.StatusBadRequest)
			mustPost(t, control+"/_sim/forget", `{"after":1}`, http.StatusBadRequest)
		}
		stop()
	}
	for _, v := range []string{"-1s", "soon", "5"} {
		var stderr bytes.Buffer
		if err := run(context.Background(), []string{"--forget-after", v}, io.Discard, &stderr); !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "-forget-after") {
			t.Errorf("--forget-after %s: err %v, stderr %q; want a usage error naming the flag", v, err, stderr.String())
		}
	}
}

// postCharge makes a charge through the provider's API and returns its id.
func postCharge(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/charges", strings.NewReader("amount=100&currency=usd&source=tok_visa"))
	req.Header.Set("Authorization", "Bearer sk_test_x")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != http.StatusOK || c.ID == "" {
		t.Fatalf("POST /v1/charges: %d %+v %v", resp.StatusCode, c, err)
	}
	return c.ID
}

// getCharge answers the status of GET /v1/charges/{id}.
func getCharge(t *testing.T, url, id string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/v1/charges/"+id, nil)
	req.Header.Set("Authorization", "Bearer sk_test_x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
