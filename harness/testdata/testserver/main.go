// Command testserver is a dependency-light system under test for the
// harness's own tests: it speaks just enough of the charge protocol to drive
// the gateway (with no idempotency of its own: it passes the key through),
// and has probes that measure each link. Knobs, by environment:
//
//	TESTSERVER_FAIL=1            exit 3 at once (a server that cannot start)
//	TESTSERVER_NOT_READY=1       /healthz answers 503 forever
//	TESTSERVER_IGNORE_SIGTERM=1  ignore SIGTERM (forces the SIGKILL path)
//	TESTSERVER_CHILD=1           spawn a child in the same process group
//	TESTSERVER_REFUSE_FIRST=1    answer the first request of each key 409
//	                             (Retry-After: 0) without charging, as a
//	                             server whose lock another request holds
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	if os.Getenv("TESTSERVER_ROLE") == "child" {
		select {} // a grandchild of the harness that only a group kill ends
	}
	if err := run(); err != nil {
		log.Printf("testserver: %v", err)
		os.Exit(1)
	}
}

type server struct {
	gatewayURL, apiKey, databaseURL string
	child                           int
	mu                              sync.Mutex
	seen                            map[string]bool // keys answered once (TESTSERVER_REFUSE_FIRST)
}

func run() error {
	if os.Getenv("TESTSERVER_FAIL") == "1" {
		fmt.Println("testserver: failing on purpose")
		os.Exit(3)
	}
	s := &server{gatewayURL: os.Getenv("GATEWAY_URL"), apiKey: os.Getenv("GATEWAY_API_KEY"), databaseURL: os.Getenv("DATABASE_URL"), seen: map[string]bool{}}
	if os.Getenv("TESTSERVER_CHILD") == "1" {
		if err := s.spawnChild(); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", os.Getenv("LISTEN_ADDR"))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.routes()}
	go s.handleSignals(srv)
	fmt.Printf("testserver listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *server) spawnChild() error {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TESTSERVER_ROLE=child")
	if err := cmd.Start(); err != nil {
		return err
	}
	s.child = cmd.Process.Pid
	return nil
}

func (s *server) handleSignals(srv *http.Server) {
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGTERM)
	for range sigc {
		if os.Getenv("TESTSERVER_IGNORE_SIGTERM") == "1" {
			fmt.Println("testserver: ignoring SIGTERM")
			continue
		}
		fmt.Println("testserver: SIGTERM, shutting down")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		srv.Shutdown(ctx)
		cancel()
		return
	}
}

func (s *server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /echo", echo)
	mux.HandleFunc("GET /pids", s.pids)
	mux.HandleFunc("GET /probe/gateway", s.probeGateway)
	mux.HandleFunc("GET /probe/db", s.probeDB)
	mux.HandleFunc("GET /probe/timezone", s.probeTimeZone)
	mux.HandleFunc("POST /v1/charges", s.charge)
	return mux
}

func (s *server) healthz(w http.ResponseWriter, _ *http.Request) {
	if os.Getenv("TESTSERVER_NOT_READY") == "1" {
		http.Error(w, "never ready", http.StatusServiceUnavailable)
		return
	}
	io.WriteString(w, "ok\n")
}

// echo answers with ?bytes=N bytes, for bandwidth, slicer and limit_data.
func echo(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.URL.Query().Get("bytes"))
	w.Header().Set("Content-Length", strconv.Itoa(n))
	io.Copy(w, io.LimitReader(zeros{}, int64(n)))
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func (s *server) pids(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, map[string]int{"pid": os.Getpid(), "child": s.child})
}

// probeGateway makes one request to the gateway on a fresh connection, so
// a link fault is measured on exactly this call.
func (s *server) probeGateway(w http.ResponseWriter, r *http.Request) {
	c := &http.Client{Timeout: timeoutParam(r), Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequestWithContext(r.Context(), "GET", s.gatewayURL+"/v1/charges/ch_probe", nil)
	req.Header.Set("Authorization", "Bearer "+s.apiKey)
	resp, err := c.Do(req)
	if err != nil {
		writeJSON(w, 502, map[string]string{"error": err.Error()})
		return
	}
	resp.Body.Close()
	writeJSON(w, 200, map[string]int{"status": resp.StatusCode})
}

func (s *server) probeDB(w http.ResponseWriter, r *http.Request) {
	var one int
	if s.queryRow(w, r, "SELECT 1", &one) {
		writeJSON(w, 200, map[string]int{"one": one})
	}
}

// probeTimeZone answers the session time zone a connection through
// DATABASE_URL gets (SHOW TimeZone), and the URL itself.
func (s *server) probeTimeZone(w http.ResponseWriter, r *http.Request) {
	var tz string
	if s.queryRow(w, r, "SHOW TimeZone", &tz) {
		writeJSON(w, 200, map[string]string{"timezone": tz, "url": s.databaseURL})
	}
}

// queryRow scans the one row of sql, on a new connection through
// DATABASE_URL, into dst; on an error it answers 502 and returns false.
func (s *server) queryRow(w http.ResponseWriter, r *http.Request, sql string, dst any) bool {
	ctx, cancel := context.WithTimeout(r.Context(), timeoutParam(r))
	defer cancel()
	conn, err := pgx.Connect(ctx, s.databaseURL)
	if err != nil {
		writeJSON(w, 502, map[string]string{"error": err.Error()})
		return false
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(ctx, sql).Scan(dst); err != nil {
		writeJSON(w, 502, map[string]string{"error": err.Error()})
		return false
	}
	return true
}

func timeoutParam(r *http.Request) time.Duration {
	d, err := time.ParseDuration(r.URL.Query().Get("timeout"))
	if err != nil || d <= 0 {
		return 5 * time.Second
	}
	return d
}

// charge passes the request to the gateway with the client's key: no
// idempotency of its own, which is all the harness tests need.
func (s *server) charge(w http.ResponseWriter, r *http.Request) {
	if os.Getenv("TESTSERVER_REFUSE_FIRST") == "1" && s.firstOf(r.Header.Get("Idempotency-Key")) {
		w.Header().Set("Retry-After", "0")
		writeJSON(w, 409, map[string]string{"error": "in progress"})
		return
	}
	var in struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
		OrderID  string `json:"order_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, 400, map[string]string{"error": err.Error()})
		return
	}
	form := url.Values{"amount": {strconv.FormatInt(in.Amount, 10)}, "currency": {in.Currency}, "metadata[order_id]": {in.OrderID}, "source": {"tok_visa"}}
	req, _ := http.NewRequestWithContext(r.Context(), "POST", s.gatewayURL+"/v1/charges", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+s.apiKey)
	req.Header.Set("Idempotency-Key", r.Header.Get("Idempotency-Key"))
	// net/http silently re-sends a request that carries Idempotency-Key when
	// a reused connection breaks; without GetBody it cannot, so a dropped
	// gateway connection reaches this server as the error it is.
	req.GetBody = nil
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		writeJSON(w, 502, map[string]string{"error": err.Error()})
		return
	}
	defer resp.Body.Close()
	s.relay(w, resp, in.OrderID)
}

// firstOf says whether key is seen for the first time, and remembers it.
func (s *server) firstOf(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := !s.seen[key]
	s.seen[key] = true
	return first
}

func (s *server) relay(w http.ResponseWriter, resp *http.Response, order string) {
	var ch struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	}
	json.NewDecoder(resp.Body).Decode(&ch)
	switch {
	case resp.StatusCode == 200:
		writeJSON(w, 201, map[string]any{"id": ch.ID, "status": ch.Status, "amount": ch.Amount, "currency": ch.Currency, "order_id": order})
	case resp.StatusCode == 402:
		writeJSON(w, 402, map[string]any{"error": map[string]string{"type": "card_error", "code": "card_declined"}})
	default:
		writeJSON(w, 502, map[string]any{"error": fmt.Sprintf("gateway answered %d", resp.StatusCode)})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
