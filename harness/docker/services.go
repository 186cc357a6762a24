package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/harness"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

const (
	gatewayPort   = "12111/tcp"
	toxiproxyAPI  = "8474/tcp"
	postgresPort  = "5432/tcp"
	serviceWait   = 60 * time.Second
	pgReadyLine   = "database system is ready to accept connections"
	pgDataTmpfs   = "/var/lib/postgresql/data"
	pgTmpfsOption = "rw,mode=1777"
)

func (e *Env) postgresImage(opts harness.Options) string {
	if opts.PostgresImage != "" {
		return opts.PostgresImage
	}
	if v := os.Getenv("IDEMCHECK_POSTGRES_IMAGE"); v != "" {
		return v
	}
	return PostgresImage
}

// startServices starts PostgreSQL, the gateway simulator and toxiproxy in
// parallel: set-up time is the slowest one's, not the sum.
func (e *Env) startServices(ctx context.Context) error {
	steps := []func(context.Context) error{e.startGateway, e.startToxiproxy}
	if e.needsPostgres() {
		steps = append(steps, e.startPostgres)
	}
	errs := make([]error, len(steps))
	var wg sync.WaitGroup
	for i, step := range steps {
		wg.Go(func() { errs[i] = step(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startPostgres runs the database with its data directory on a tmpfs:
// durability is not under test and a disk-backed data dir on an overlay
// filesystem costs seconds per run.
func (e *Env) startPostgres(ctx context.Context) error {
	img := e.pgImage
	c, err := e.run(ctx, spec{role: "postgres", image: img, ports: []string{postgresPort},
		env:   map[string]string{"POSTGRES_HOST_AUTH_METHOD": "trust"},
		tmpfs: map[string]string{pgDataTmpfs: pgTmpfsOption},
		wait:  wait.ForLog(pgReadyLine).WithStartupTimeout(serviceWait).WithPollInterval(50 * time.Millisecond)})
	if err != nil {
		return err
	}
	e.pg = c
	return nil
}

func (e *Env) startGateway(ctx context.Context) error {
	c, err := e.run(ctx, spec{role: "gateway", image: GatewayImage, ports: []string{gatewayPort}, cmd: e.gatewayCfg.Args()})
	if err != nil {
		return err
	}
	e.gw = c
	addr, err := hostAddr(ctx, c, gatewayPort)
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, "http://"+addr+"/_sim/faults", serviceWait); err != nil {
		return fmt.Errorf("gateway: %w%s", err, e.logTail(c, 10))
	}
	e.gateway = newGatewayCtl(gatewaysim.NewClient("http://"+addr), e.log)
	return nil
}

func (e *Env) startToxiproxy(ctx context.Context) error {
	ports := []string{toxiproxyAPI}
	for i := 0; i < e.target.Replicas; i++ {
		ports = append(ports, fmt.Sprintf("%d/tcp", clientPort(i)))
	}
	c, err := e.run(ctx, spec{role: "toxiproxy", image: ToxiproxyImage, ports: ports})
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
// link): for the harness's own inspection. "" without PostgreSQL.
func (e *Env) DatabaseURL() string {
	if e.pg == nil {
		return ""
	}
	addr, err := hostAddr(context.Background(), e.pg, postgresPort)
	if err != nil {
		return ""
	}
	return "postgres://postgres@" + addr + "/postgres?sslmode=disable"
}

var _ testcontainers.Container = (*testcontainers.DockerContainer)(nil)

// RestartStore is not yet offered in container mode.
func (e *Env) RestartStore(_ context.Context, name string, _ bool) error {
	return fmt.Errorf("%w: restarting %s is not yet supported in container mode", harness.ErrNoStore, name)
}
