package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/harness"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

const (
	gatewayPort        = 12111       // the provider's API, reached by the replicas' gateway links
	gatewayControlPort = "12112/tcp" // the control API, published for the harness alone
	toxiproxyAPI       = "8474/tcp"
	// gatewayViaBase+i serves the provider's API to replica i's gateway
	// link alone, so that what the gateway records of a request that is
	// not its API names the replica (gateway-sim --via).
	gatewayViaBase = 12200
	// toxiproxyAPIAlias is toxiproxy's name on the control network alone:
	// its API listens on the address that name resolves to, not on the
	// data network the replicas share with it.
	toxiproxyAPIAlias = "toxiproxy-api"
	serviceWait       = 60 * time.Second
)

func postgresImage(opts harness.Options) string {
	if opts.PostgresImage != "" {
		return opts.PostgresImage
	}
	if v := os.Getenv("IDEMCHECK_POSTGRES_IMAGE"); v != "" {
		return v
	}
	return PostgresImage
}

// startServices starts the stores the target needs, the gateway
// simulator and toxiproxy in parallel: set-up time is the slowest one's,
// not the sum.
func (e *Env) startServices(ctx context.Context) error {
	steps := []func(context.Context) error{e.startGateway, e.startToxiproxy}
	for _, name := range e.target.StoreNames() {
		s := e.stores[name]
		steps = append(steps, func(ctx context.Context) error { return e.startStore(ctx, s) })
	}
	errs := make([]error, len(steps))
	var wg sync.WaitGroup
	for i, step := range steps {
		wg.Go(func() { errs[i] = step(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (e *Env) startGateway(ctx context.Context) error {
	args := []string{fmt.Sprintf("--addr=0.0.0.0:%d", gatewayPort), "--control-addr=0.0.0.0:" + strings.TrimSuffix(gatewayControlPort, "/tcp")}
	for i := range e.target.Replicas {
		args = append(args, fmt.Sprintf("--via=%s=0.0.0.0:%d", harness.GatewayLink(i), gatewayViaPort(i)))
	}
	args = append(args, e.gatewayCfg.Args()...)
	c, err := e.run(ctx, spec{role: "gateway", image: GatewayImage, ports: []string{gatewayControlPort}, cmd: args})
	if err != nil {
		return err
	}
	e.gw = c
	addr, err := hostAddr(ctx, c, gatewayControlPort)
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, "http://"+addr+"/_sim/health", serviceWait); err != nil {
		return fmt.Errorf("gateway: %w%s", err, e.logTail(c, 10))
	}
	e.gateway = newGatewayCtl(gatewaysim.NewClient("http://"+addr), e.log)
	return nil
}

func (e *Env) startToxiproxy(ctx context.Context) error {
	ports := []string{toxiproxyAPI}
	for i := 0; i < e.target.Replicas; i++ {
		ports = append(ports, fmt.Sprintf("%d/tcp", readyPort(i)))
		for _, l := range e.publishedLinks(i) {
			ports = append(ports, fmt.Sprintf("%d/tcp", linkPort(l)))
		}
	}
	c, err := e.run(ctx, spec{role: "toxiproxy", image: ToxiproxyImage, ports: ports, cmd: []string{"-host=" + toxiproxyAPIAlias}})
	if err != nil {
		return err
	}
	e.tox = c
	api, err := hostAddr(ctx, c, toxiproxyAPI)
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, "http://"+api+"/version", serviceWait); err != nil {
		return fmt.Errorf("toxiproxy: %w%s", err, e.logTail(c, 10))
	}
	e.links = newLinks(api)
	return nil
}

// gatewayViaPort is the gateway's port for replica i's gateway link.
func gatewayViaPort(i int) int { return gatewayViaBase + i }

// waitHTTP polls url until it answers 2xx, d passes or ctx ends.
func waitHTTP(ctx context.Context, url string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := harness.WaitReady(ctx, url, 25*time.Millisecond, nil); err != nil {
		return fmt.Errorf("not ready (GET %s): %w", url, err)
	}
	return nil
}

// DatabaseURL is PostgreSQL's published address, direct (not through any
// link), read afresh on every call (a restarted container may be
// published on another port): for the harness's own inspection. "" without
// PostgreSQL.
func (e *Env) DatabaseURL() string {
	s, ok := e.stores["postgres"]
	if !ok || s.c == nil {
		return ""
	}
	addr, err := hostAddr(context.Background(), s.c, fmt.Sprintf("%d/tcp", s.kind.port))
	if err != nil {
		return ""
	}
	return postgresURL(addr)
}
