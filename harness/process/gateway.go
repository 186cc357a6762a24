package process

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
)

// gateway is the simulator served in-process on loopback ports: its own
// address (addr), and one per replica's gateway link (via), so that a
// request that is not the provider's API names the replica it came from.
type gateway struct {
	sim     *gatewaysim.Sim
	log     *slog.Logger
	addr    string
	mu      sync.Mutex
	servers []*http.Server
	served  sync.WaitGroup
}

func startGateway(cfg gatewaysim.Config, log *slog.Logger) (*gateway, error) {
	if cfg.Logger == nil {
		cfg.Logger = log.With("component", "gateway")
	}
	g := &gateway{sim: gatewaysim.New(cfg), log: log}
	addr, err := g.via("")
	if err != nil {
		return nil, err
	}
	g.addr = addr
	return g, nil
}

// via serves the provider's API on a new loopback port for the requests
// that come by link name ("" for none) and returns its address.
func (g *gateway) via(name string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("gateway: listen: %w", err)
	}
	srv := &http.Server{Handler: g.sim.HandlerVia(name), ReadHeaderTimeout: 10 * time.Second}
	g.mu.Lock()
	g.servers = append(g.servers, srv)
	g.mu.Unlock()
	g.served.Go(func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			g.log.Error("gateway server stopped", "err", err)
		}
	})
	return ln.Addr().String(), nil
}

// close releases held responses (a charge-then-hang handler would otherwise
// block shutdown forever) and stops the servers.
func (g *gateway) close() error {
	g.sim.ReleaseAll()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	g.mu.Lock()
	servers := g.servers
	g.mu.Unlock()
	var errs []error
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, srv.Close())
		}
	}
	g.served.Wait()
	g.sim.Close()
	return errors.Join(errs...)
}

// Gateway is the in-process gateway simulator: its ledger is the oracle,
// and faults install gateway faults on it.
func (e *Env) Gateway() *gatewaysim.Sim { return e.gw.sim }

// GatewayURL is the simulator's provider API on its own address, not
// through any replica's gateway link: for tests that charge it directly.
// It serves no control API (/_sim/... gets the provider's 404): in
// process mode the harness drives the simulator in-process
// (GatewayController), so there is no control address for a replica to
// find.
func (e *Env) GatewayURL() string { return "http://" + e.gw.addr }

// GatewayAPIKey is the secret key the replicas authenticate to the gateway
// with; ledger entries carry it as APIKey.
func (e *Env) GatewayAPIKey() string { return e.apiKey }
