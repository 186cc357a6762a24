package docker

import (
	"context"
	"errors"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// The images container mode runs, as images/build.sh tags them (it reads
// these lines). The store images are named after the server version they
// hold, the one Debian 12 ships; build.sh refuses to build one from
// another version, so a tag always says what runs.
const (
	PostgresImage  = "idemcheck/postgres:15"
	RedisImage     = "idemcheck/redis:7"
	MariaDBImage   = "idemcheck/mariadb:10.11"
	GatewayImage   = "idemcheck/gateway-sim:latest"
	ToxiproxyImage = "idemcheck/toxiproxy:latest"
	ReferenceImage = "idemcheck/reference-server:latest"
)

// Sentinel errors. Both mean the environment could not be set up (exit 3).
var (
	// ErrImageNotFound: an image is not in the local engine. It is never
	// pulled, because CI runners may be offline and a pull would make a
	// run depend on a registry's state.
	ErrImageNotFound = errors.New("image not found locally")
	// ErrNoDocker: no Docker engine answers.
	ErrNoDocker = errors.New("docker engine not available")
)

// newClient connects to the engine the way testcontainers does (DOCKER_HOST,
// ~/.testcontainers.properties, the default socket) and pings it.
func newClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoDocker, err)
	}
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("%w: %w", ErrNoDocker, err)
	}
	return cli, nil
}

// checkImages fails on the first image missing from the engine.
func checkImages(ctx context.Context, cli *testcontainers.DockerClient, images ...string) error {
	for _, img := range images {
		if _, err := cli.ImageInspect(ctx, img); err != nil {
			if cerrdefs.IsNotFound(err) {
				return fmt.Errorf("%w: image %s not found locally: run make images (images/build.sh)", ErrImageNotFound, img)
			}
			return fmt.Errorf("inspect image %s: %w", img, err)
		}
	}
	return nil
}

// Images are the images the Env runs, by tag, each with its image id
// ("sha256:…"): what a report's seal records of a container-mode run.
func (e *Env) Images(ctx context.Context) map[string]string {
	out := map[string]string{}
	for _, img := range e.images() {
		if res, err := e.cli.ImageInspect(ctx, img); err == nil {
			out[img] = res.ID
		}
	}
	return out
}

// Available reports whether a Docker engine answers, with the reason when
// it does not; tests use it to skip.
func Available(ctx context.Context) error {
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	return cli.Close()
}

func isNotFound(err error) bool { return cerrdefs.IsNotFound(err) }
