package docker

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// The container-mode controller passes a retention on to the gateway
// (its control API, served here by the simulator the container runs; a
// gateway that cannot be told is a warning) and keeps its own copy of the
// event stream to it: an event that happened more than the retention ago
// is forgotten once every subscriber has taken it, and never before. The
// gateway's clock is the test's, so no wait is on the wall clock.
func TestGatewayCtl_ForgetAfter(t *testing.T) {
	clock := gatewaysim.NewManualClock(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	sim := gatewaysim.New(gatewaysim.Config{Now: clock.Now})
	srv := httptest.NewServer(sim.ControlHandler())
	var logged bytes.Buffer
	g := newGatewayCtl(gatewaysim.NewClient(srv.URL), slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { g.close(); sim.Close(); srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	fast, stopFast := g.SubscribeSince(0)
	defer stopFast()
	slow, stopSlow := g.SubscribeSince(0)
	defer stopSlow()
	g.ForgetAfter(time.Minute)
	event := func() int64 { // one event at the gateway, taken by fast
		t.Helper()
		if err := g.c.Reset(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-fast:
			return ev.Seq
		case <-ctx.Done():
			t.Fatal("no event came")
		}
		return 0
	}
	kept := func() []int64 { // the local log
		g.mu.Lock()
		defer g.mu.Unlock()
		var seqs []int64
		for _, ev := range g.events {
			seqs = append(seqs, ev.Seq)
		}
		return seqs
	}

	first := event()
	clock.Advance(2 * time.Minute)
	second := event()
	clock.Advance(2 * time.Minute)
	third := event()
	// slow took the first event (its goroutine holds it for the channel)
	// and nothing since: the second stays, past the retention as it is.
	if got := kept(); len(got) != 2 || got[0] != second || got[1] != third {
		t.Fatalf("log %v, want [%d %d]: only what every subscriber took goes", got, second, third)
	}
	for _, want := range []int64{first, second, third} {
		if ev := <-slow; ev.Seq != want {
			t.Fatalf("the slow subscriber got %d, want %d", ev.Seq, want)
		}
	}
	clock.Advance(2 * time.Minute)
	fourth := event()
	if got := kept(); len(got) != 1 || got[0] != fourth {
		t.Fatalf("log %v, want [%d]: what everyone took past the retention goes", got, fourth)
	}
	late, stopLate := g.SubscribeSince(0)
	defer stopLate()
	if ev := <-late; ev.Seq != fourth {
		t.Fatalf("a new subscriber starts at %d, want %d (the oldest kept)", ev.Seq, fourth)
	}
	if logged.Len() > 0 {
		t.Fatalf("passing the retention on to the gateway: %s", logged.String())
	}
	gone := newGatewayCtl(gatewaysim.NewClient("http://127.0.0.1:1"), slog.New(slog.NewTextHandler(&logged, nil)))
	defer gone.close()
	gone.ForgetAfter(time.Minute)
	if !strings.Contains(logged.String(), "gateway forget-after") {
		t.Fatalf("a gateway that cannot be told: logged %q, want a warning", logged.String())
	}
}
