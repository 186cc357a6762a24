package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// gateway is the simulator served in-process on a loopback port.
type gateway struct {
	sim    *gatewaysim.Sim
	server *http.Server
	addr   string
	served chan struct{}
}

func startGateway(cfg gatewaysim.Config, log *slog.Logger) (*gateway, error) {
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
// block shutdown forever) and stops the server.
func (g *gateway) close() error {
	g.sim.ReleaseAll()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	shutErr := g.server.Shutdown(ctx)
	if shutErr != nil {
		shutErr = g.server.Close()
	}
	<-g.served
	g.sim.Close()
	return shutErr
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
