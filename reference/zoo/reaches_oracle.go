package zoo

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// reachesOracle is the reference that, after every charge it answers,
// reaches for the harness that judges it: it clears the gateway's faults
// (DELETE /_sim/faults) and resets its ledger (POST /_sim/reset) through
// the simulator's control API on the GATEWAY_URL it was given, and tries
// toxiproxy's API where it might be (127.0.0.1:8474, the default, in
// process mode; toxiproxy:8474 and the gateway's control port in a
// container's network) to remove every toxic (POST /reset). Its charges
// are the reference's: the bug is the reach alone. A server that can
// reset the ledger after a double charge, or clear the fault armed for
// its crash, would make every other verdict worthless.
//
// Each distinct outcome is written once to stderr ("reaches-oracle: POST
// http://…/_sim/reset: 404"), so the replica's log shows what it reached.
var reachesOracle = Variant{
	Name: "reaches-oracle",
	Bug:  "after every charge it clears the gateway's faults and resets its ledger through /_sim/ on its GATEWAY_URL, and tries toxiproxy's API",
	New: func(cfg reference.Config) (Server, error) {
		s, err := reference.New(cfg)
		if err != nil {
			return nil, err
		}
		return &reacher{Server: s, gateway: strings.TrimRight(cfg.Gateway.URL, "/"), seen: map[string]bool{},
			client: &http.Client{Timeout: 300 * time.Millisecond}}, nil
	},
}

// reacher is reaches-oracle's server.
type reacher struct {
	*reference.Server
	gateway string
	client  *http.Client
	mu      sync.Mutex
	seen    map[string]bool
}

// oracleGuesses are where a server might find the harness's control APIs
// besides its GATEWAY_URL: toxiproxy's default port on loopback, and the
// names a container network would give toxiproxy and the gateway.
var oracleGuesses = []string{"http://127.0.0.1:8474/reset", "http://toxiproxy:8474/reset", "http://gateway:12112/_sim/reset", "http://toxiproxy-api:8474/reset"}

// Handler answers as the reference does, then, after a charge answered
// 2xx, reaches for the oracle.
func (r *reacher) Handler() http.Handler {
	next := r.Server.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := &statusOf{ResponseWriter: w}
		next.ServeHTTP(rec, req)
		if req.Method == http.MethodPost && rec.status >= 200 && rec.status < 300 {
			r.reach(req.Context())
		}
	})
}

// reach sends the tampering requests, one after another.
func (r *reacher) reach(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	r.send(ctx, http.MethodDelete, r.gateway+"/_sim/faults")
	r.send(ctx, http.MethodPost, r.gateway+"/_sim/reset")
	for _, u := range oracleGuesses {
		r.send(ctx, http.MethodPost, u)
	}
}

func (r *reacher) send(ctx context.Context, method, url string) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return
	}
	outcome := ""
	resp, err := r.client.Do(req)
	if err != nil {
		outcome = "unreachable (" + shortErr(err) + ")"
	} else {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		outcome = fmt.Sprint(resp.StatusCode)
	}
	line := fmt.Sprintf("reaches-oracle: %s %s: %s", method, url, outcome)
	r.mu.Lock()
	first := !r.seen[line]
	r.seen[line] = true
	r.mu.Unlock()
	if first {
		fmt.Fprintln(os.Stderr, line)
	}
}

// shortErr is the last part of a transport error: "connection refused",
// "no such host", "Client.Timeout exceeded ...".
func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// statusOf remembers the status an answer was written with.
type statusOf struct {
	http.ResponseWriter
	status int
}

func (s *statusOf) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusOf) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}
