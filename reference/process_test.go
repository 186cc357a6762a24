package reference_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/reference"
	"github.com/rs/zerolog"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// buildServer builds cmd/reference-server once per test binary into a
// temporary directory that TestMain removes.
func buildServer(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "reference-server-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "reference-server")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/idemcheck/idemcheck/cmd/reference-server").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// proc is a running reference-server process.
type proc struct {
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
	done chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer starts the binary and waits, bounded, for its ready line.
func startServer(t *testing.T, bin string, e *env, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--listen", "127.0.0.1:0", "--log-level", "debug"}, args...)...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+e.dbURL, "GATEWAY_URL="+e.gw.URL, "GATEWAY_API_KEY=sk_test_reference")
	p := &proc{cmd: cmd, logs: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "reference-server listening on "); ok {
				ready <- addr
			}
		}
		io.Copy(io.Discard, stdout)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("server logs:\n%s", p.logs.String())
		}
	})
	select {
	case p.url = <-ready:
	case err := <-p.done:
		t.Fatalf("server exited before ready: %v\n%s", err, p.logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("server not ready after 30s\n%s", p.logs.String())
	}
	return p
}

// wait waits, bounded, for the process to exit.
func (p *proc) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("server did not exit")
		return nil
	}
}

// A real server process is SIGKILLed while the gateway holds a charge it
// committed (charge-then-hang: the crash window). After a restart the key is
// recovered by re-sending the recorded request id: by the client's retry, or
// by the sweeper with no retry at all. Either way the original charge is
// returned and the ledger holds one charge.
func TestProcess_KilledInChargeThenHang(t *testing.T) {
	bin := buildServer(t)
	for _, mode := range []string{"retry", "sweeper"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, envOptions{replicas: -1})
			args := []string{"--lease", "1s", "--max-wait", "5s", "--recovery-after", "1s"}
			if mode == "retry" {
				args = append(args, "--sweep-interval", "-1s") // only the retry can recover
			} else {
				args = append(args, "--sweep-interval", "100ms")
			}
			order := uniq("ord")
			e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.ChargeThenHang, Match: gatewaysim.Match{OrderID: order}, Times: 1})
			c := charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(order, 3100)}

			first := startServer(t, bin, e, args...)
			inflight := make(chan error, 1)
			go func() { _, err := e.post(first.url, c); inflight <- err }()
			hold := e.waitEvent(func(ev gatewaysim.Event) bool { return ev.Type == gatewaysim.EventHold && ev.OrderID == order })
			if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			first.wait(t)
			if err := <-inflight; err == nil {
				t.Fatal("the request in flight survived SIGKILL")
			}
			if state, _, _, err := e.row(c.tenant, c.key); err != nil || state != reference.StateInProgress {
				t.Fatalf("after the crash: state %q, err %v", state, err)
			}

			second := startServer(t, bin, e, args...)
			if mode == "sweeper" {
				eventually(t, 30*time.Second, "the sweeper to finish the key", func() bool {
					state, _, _, _ := e.row(c.tenant, c.key)
					return state == reference.StateSucceeded
				})
			}
			r := e.mustPost(second.url, c)
			if r.status != http.StatusCreated || r.id(t) != hold.ChargeID {
				t.Fatalf("retry after restart: %s, want the held charge %s", r, hold.ChargeID)
			}
			if l := e.chargesFor(order); len(l) != 1 {
				t.Fatalf("ledger holds %d charges for the order, want 1", len(l))
			}
			want := `idemcheck_reference_recoveries_total{by="` + mode + `",outcome="charged"} 1`
			if m := e.get(second.url + "/metrics"); !strings.Contains(m, want) {
				t.Errorf("metrics lack %s", want)
			}
		})
	}
}

// The network cuts every pooled database connection while they sit idle
// (a proxy restart, a failover: in a certification, another example's
// down-postgres-link fault). Once the database is reachable again no request
// may pay for a connection that died while nobody used it: the pool checks a
// connection before lending it, so every charge after the cut is 201.
func TestProcess_ConnectionsCutWhileIdleAreNotLent(t *testing.T) {
	bin := buildServer(t)
	e := newEnv(t, envOptions{replicas: -1})
	u, err := url.Parse(e.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	px := toxiproxy.NewProxy(srv, "db", "127.0.0.1:0", u.Host)
	if err := srv.Collection.Add(px, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Collection.Clear() })
	u.Host = px.Listen
	proxied := *e
	proxied.dbURL = u.String()
	p := startServer(t, bin, &proxied, "--sweep-interval", "-1s")

	tenant := uniq("sk")
	pay := func(i int) reply {
		r, err := e.post(p.url, charge{tenant: tenant, key: uniq("key"), body: chargeBody(uniq("ord"), 100+i)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Open several pooled connections: concurrent charges each hold one.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); pay(i) }()
	}
	wg.Wait()
	px.Stop() // closes every connection through the proxy
	if err := px.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		if r := pay(i); r.status != http.StatusCreated {
			t.Fatalf("charge %d after the cut: %s, want 201 on a fresh connection", i, r)
		}
	}
}

// SIGTERM lets the request in flight finish before the process exits 0.
func TestProcess_GracefulShutdown(t *testing.T) {
	bin := buildServer(t)
	e := newEnv(t, envOptions{replicas: -1})
	order := uniq("ord")
	e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Latency, Match: gatewaysim.Match{OrderID: order}, Latency: 500 * time.Millisecond})
	p := startServer(t, bin, e)
	done := make(chan reply, 1)
	go func() {
		r, _ := e.post(p.url, charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(order, 10)})
		done <- r
	}()
	e.waitEvent(func(ev gatewaysim.Event) bool { return ev.Type == gatewaysim.EventFault && ev.OrderID == order })
	p.cmd.Process.Signal(syscall.SIGTERM)
	if r := <-done; r.status != http.StatusCreated {
		t.Fatalf("in-flight request: %s", r)
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// Missing configuration is a usage error (exit 2), named.
func TestProcess_MissingConfig(t *testing.T) {
	bin := buildServer(t)
	cmd := exec.CommandContext(context.Background(), bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "DATABASE_URL") {
		t.Fatalf("exit %v, output %s", err, out)
	}
}
