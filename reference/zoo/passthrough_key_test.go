package zoo_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/internal/pgtest"
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/zoo"
	"github.com/jackc/pgx/v5/pgxpool"
)

// passthrough serves passthrough-key in front of a gateway simulator
// with cfg, on a fresh database, and returns the server's URL and the
// simulator.
func passthrough(t *testing.T, cfg gatewaysim.Config) (string, *gatewaysim.Sim) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := reference.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	sim := gatewaysim.New(cfg)
	gw := httptest.NewServer(sim.Handler())
	t.Cleanup(gw.Close)
	v, err := zoo.Lookup("passthrough-key")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := v.New(reference.Config{Pool: pool, Gateway: reference.NewGateway(gw.URL, "sk_test_pt", 2*time.Second),
		MaxWait: time.Second, SweepInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts.URL, sim
}

// pay sends one charge request and returns its status and body.
func pay(t *testing.T, url, key, body string) (int, string) {
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/charges", strings.NewReader(body))
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Authorization", "Bearer tenant_a")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// succeeded counts the gateway's succeeded charges for order.
func succeeded(sim *gatewaysim.Sim, order string) int {
	n := 0
	for _, c := range sim.Ledger() {
		if c.OrderID == order && c.Status == gatewaysim.StatusSucceeded {
			n++
		}
	}
	return n
}

// TestPassthroughKey_TheProviderDeduplicates: with an idempotent gateway,
// duplicates in flight together (the gateway slow) and a retry are one
// charge, and a reused key with another body is refused with 422; with a
// gateway without idempotency, the duplicates in flight both charge.
func TestPassthroughKey_TheProviderDeduplicates(t *testing.T) {
	body := func(order string, amount int) string {
		return fmt.Sprintf(`{"amount":%d,"currency":"usd","order_id":%q}`, amount, order)
	}
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("no_idempotency=%v", off), func(t *testing.T) {
			url, sim := passthrough(t, gatewaysim.Config{NoIdempotency: off})
			sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Latency, Latency: 300 * time.Millisecond, Match: gatewaysim.Match{OrderID: "ord_dup"}})
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() { pay(t, url, "k_dup", body("ord_dup", 1250)) })
			}
			wg.Wait()
			if got, want := succeeded(sim, "ord_dup"), map[bool]int{false: 1, true: 2}[off]; got != want {
				t.Errorf("duplicates in flight: %d charges, want %d", got, want)
			}
			if off {
				return
			}
			first, _ := pay(t, url, "k_one", body("ord_one", 1250))
			retry, _ := pay(t, url, "k_one", body("ord_one", 1250))
			reused, text := pay(t, url, "k_one", body("ord_one", 999))
			if first != http.StatusCreated || retry != http.StatusCreated || succeeded(sim, "ord_one") != 1 {
				t.Errorf("first %d, retry %d, %d charges: want one charge, replayed", first, retry, succeeded(sim, "ord_one"))
			}
			if reused != http.StatusUnprocessableEntity {
				t.Errorf("reused key with another body: %d %s, want 422", reused, text)
			}
		})
	}
}
