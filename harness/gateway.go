package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// gateway is the simulator served in-process on a loopback port, plus the
// feed that copies its ledger decisions into the history.
type gateway struct {
	sim    *gatewaysim.Sim
	server *http.Server
	addr   string
	served chan struct{}
	feed   *ledgerFeed
}

func startGateway(cfg gatewaysim.Config, rec *history.Recorder, log *slog.Logger) (*gateway, error) {
	if cfg.Logger == nil {
		cfg.Logger = log.With("component", "gateway")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("gateway: listen: %w", err)
	}
	sim := gatewaysim.New(cfg)
	g := &gateway{
		sim:    sim,
		server: &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 10 * time.Second},
		addr:   ln.Addr().String(),
		served: make(chan struct{}),
		feed:   startLedgerFeed(sim, rec),
	}
	go func() {
		defer close(g.served)
		if err := g.server.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("gateway server stopped", "err", err)
		}
	}()
	return g, nil
}

// close releases held responses (a charge-then-hang handler would otherwise
// block shutdown forever), copies the last ledger events into the history,
// and stops the server and the feed.
func (g *gateway) close() error {
	g.sim.ReleaseAll()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	syncErr := g.feed.sync(ctx)
	shutErr := g.server.Shutdown(ctx)
	if shutErr != nil {
		shutErr = g.server.Close()
	}
	<-g.served
	g.sim.Close()
	g.feed.stop()
	return errors.Join(syncErr, shutErr)
}

// ledgerFeed copies the simulator's charge and decline events into the
// Recorder as history.Charge, stamped with the event's time on the
// recorder's clock. Only ledger events are copied: fault firings (holds,
// 500s) are the faults package's to record, because only it knows which
// injected fault they belong to.
type ledgerFeed struct {
	sim    *gatewaysim.Sim
	rec    *history.Recorder
	events <-chan gatewaysim.Event
	cancel func()
	done   chan struct{}

	mu      sync.Mutex
	seq     int64         // last event handled
	advance chan struct{} // closed and replaced whenever seq moves
}

func startLedgerFeed(sim *gatewaysim.Sim, rec *history.Recorder) *ledgerFeed {
	ch, cancel := sim.SubscribeSince(0)
	f := &ledgerFeed{sim: sim, rec: rec, events: ch, cancel: cancel, done: make(chan struct{}), advance: make(chan struct{})}
	go f.run()
	return f
}

func (f *ledgerFeed) run() {
	defer close(f.done)
	for ev := range f.events {
		if c, ok := chargeOf(ev, f.rec); ok {
			f.rec.Charge(c)
		}
		f.handled(ev.Seq)
	}
}

func (f *ledgerFeed) handled(seq int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq = seq
	close(f.advance)
	f.advance = make(chan struct{})
}

// chargeOf converts a ledger event; other events are not charges.
func chargeOf(ev gatewaysim.Event, rec *history.Recorder) (history.Charge, bool) {
	var status string
	switch ev.Type {
	case gatewaysim.EventCharge:
		status = gatewaysim.StatusSucceeded
	case gatewaysim.EventDecline:
		status = gatewaysim.StatusFailed
	default:
		return history.Charge{}, false
	}
	return history.Charge{
		ID: ev.ChargeID, Order: ev.OrderID, Amount: ev.Amount, Currency: ev.Currency, Status: status,
		IdempotencyKey: ev.IdempotencyKey, APIKey: ev.APIKey, At: rec.At(ev.Time),
	}, true
}

// sync waits until every event the simulator has emitted so far is handled.
func (f *ledgerFeed) sync(ctx context.Context) error {
	evs := f.sim.Events()
	if len(evs) == 0 {
		return nil
	}
	want := evs[len(evs)-1].Seq
	for {
		f.mu.Lock()
		seq, advance := f.seq, f.advance
		f.mu.Unlock()
		if seq >= want {
			return nil
		}
		select {
		case <-advance:
		case <-f.done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("sync ledger: at event %d of %d: %w", seq, want, ctx.Err())
		}
	}
}

func (f *ledgerFeed) stop() {
	f.cancel()
	<-f.done
}

// Gateway is the in-process gateway simulator: its ledger is the oracle,
// and faults install gateway faults on it.
func (e *Env) Gateway() *gatewaysim.Sim { return e.gw.sim }

// GatewayURL is the simulator's own address, not through any replica's
// gateway link: for the harness's inspection and control, never for a SUT.
func (e *Env) GatewayURL() string { return "http://" + e.gw.addr }

// GatewayAPIKey is the secret key the replicas authenticate to the gateway
// with; ledger entries carry it as APIKey.
func (e *Env) GatewayAPIKey() string { return e.apiKey }

// SyncLedger waits until every charge and decline the gateway has made so
// far is in the Recorder. Call it before Recorder.Snapshot: the feed is
// asynchronous, and a history that misses the last charge could hide a
// double charge.
func (e *Env) SyncLedger(ctx context.Context) error {
	if e.gw == nil {
		return ErrClosed
	}
	return e.gw.feed.sync(ctx)
}
