package docker

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
)

// spec is one container to run on the Env's networks (attach).
type spec struct {
	role       string // "postgres", "gateway", "toxiproxy", "replica0", ...: name suffix and network alias
	image      string
	entrypoint []string
	cmd        []string
	env        map[string]string
	ports      []string // container ports published on 127.0.0.1, e.g. "8474/tcp"
	volume     string   // a directory kept on the container's own volume
	stopSignal string   // docker stop's signal ("" is the image's, SIGTERM)
}

func (e *Env) labels(role string) map[string]string {
	return map[string]string{LabelRun: e.runID, "idemcheck.role": role, "idemcheck.target": e.target.Name}
}

// The run's networks. The server under test must not reach the oracle
// (the gateway's control API, toxiproxy's API), so its replicas share no
// network with either:
//
//   - control: the gateway simulator, the stores and toxiproxy. The
//     gateway's control API and toxiproxy's API are reached from the
//     host, on ports published on 127.0.0.1 (bindLoopback), which no
//     container can reach.
//   - data (internal): toxiproxy and the replicas, which are attached to
//     it alone. A replica reaches the gateway and its stores only through
//     its own proxies; toxiproxy's API listens on its control address
//     alone (toxiproxyAPIAlias), not on this network. Being internal, it
//     never carries a container's published ports: toxiproxy's are
//     published on its control address, and a replica publishes none
//     (the harness checks it ready through its ready proxy, readyPort).
const (
	netControl = iota
	netData
	netCount
)

// runNetwork is one network of the run.
type runNetwork struct{ name, id string }

// startNetwork creates the run's private bridge networks.
func (e *Env) startNetwork(ctx context.Context) error {
	for i := range netCount {
		opts := []tcnetwork.NetworkCustomizer{tcnetwork.WithLabels(e.labels("network"))}
		if i == netData {
			opts = append(opts, tcnetwork.WithInternal())
		}
		nw, err := tcnetwork.New(ctx, opts...)
		if err != nil {
			return fmt.Errorf("network: %w", err)
		}
		e.mu.Lock()
		e.networks[i] = runNetwork{nw.Name, nw.ID}
		e.mu.Unlock()
	}
	return nil
}

// attach is the networks a container of role joins, the first its own,
// and its aliases on each: the replicas on data alone (where their links
// reach them); toxiproxy on data and control, its API alias on control
// alone; the gateway and the stores on control.
func (e *Env) attach(role string) ([]string, map[string][]string) {
	ctl, data := e.networks[netControl].name, e.networks[netData].name
	switch {
	case role == "toxiproxy":
		return []string{data, ctl}, map[string][]string{data: {role}, ctl: {role, toxiproxyAPIAlias}}
	case strings.HasPrefix(role, "replica"):
		return []string{data}, map[string][]string{data: {role}}
	}
	return []string{ctl}, map[string][]string{ctl: {role}}
}

// run creates and starts a container. The id is recorded as soon as the
// container exists, so that Close removes it even when starting it or
// waiting for it failed.
func (e *Env) run(ctx context.Context, s spec) (*testcontainers.DockerContainer, error) {
	nets, aliases := e.attach(s.role)
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Name:  fmt.Sprintf("idemcheck-%s-%s", e.runID, s.role),
			Image: s.image, Entrypoint: s.entrypoint, Cmd: s.cmd, Env: s.env,
			Labels: e.labels(s.role), ExposedPorts: s.ports,
			Networks: nets, NetworkAliases: aliases,
			ConfigModifier: func(c *container.Config) {
				if s.stopSignal != "" { // else the image's
					c.StopSignal = s.stopSignal
				}
			},
			HostConfigModifier: func(hc *container.HostConfig) {
				bindLoopback(hc, s.ports)
				e.mountVolume(hc, s)
			},
			LifecycleHooks: []testcontainers.ContainerLifecycleHooks{{
				PostCreates: []testcontainers.ContainerHook{func(_ context.Context, c testcontainers.Container) error {
					e.track(c.GetContainerID())
					return nil
				}},
			}},
		},
		Started: true,
		Logger:  tclog.NewNoopLogger(),
	}
	begin := time.Now()
	c, err := testcontainers.GenericContainer(ctx, req)
	e.log.Debug("container started", "role", s.role, "took", time.Since(begin).Round(time.Millisecond))
	if c != nil {
		e.track(c.GetContainerID())
	}
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w%s", s.role, s.image, err, e.logTail(c, 15))
	}
	return c.(*testcontainers.DockerContainer), nil
}

func (e *Env) track(id string) {
	if id == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, have := range e.created {
		if have == id {
			return
		}
	}
	e.created = append(e.created, id)
}

// mountVolume puts s.volume on an anonymous volume of the container,
// labelled with the run. Like the container's own filesystem, and unlike
// a tmpfs mount (emptied when the container stops), it keeps a store's
// data across a restart; unlike the container's filesystem it bypasses
// the storage driver's overlay (fuse-overlayfs on some engines, slow to
// write through). Removing the container with its volumes removes it. The
// engine copies what the image has at that path into it on first use
// (MariaDB's initialised data directory).
func (e *Env) mountVolume(hc *container.HostConfig, s spec) {
	if s.volume == "" {
		return
	}
	hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeVolume, Target: s.volume,
		VolumeOptions: &mount.VolumeOptions{Labels: e.labels(s.role)}})
}

// bindLoopback publishes every exposed port on 127.0.0.1 only: toxiproxy's
// API and the gateway's control API take faults from anyone who reaches
// them, so they must not be open to the machine's network.
func bindLoopback(hc *container.HostConfig, ports []string) {
	if hc.PortBindings == nil {
		hc.PortBindings = network.PortMap{}
	}
	for _, p := range ports {
		port, err := network.ParsePort(p)
		if err != nil {
			continue
		}
		hc.PortBindings[port] = []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: "0"}}
	}
}

// hostAddr is the 127.0.0.1 address a container port is published on.
func hostAddr(ctx context.Context, c *testcontainers.DockerContainer, port string) (string, error) {
	p, err := c.MappedPort(ctx, port)
	if err != nil {
		return "", fmt.Errorf("published port %s: %w", port, err)
	}
	return fmt.Sprintf("127.0.0.1:%d", p.Num()), nil
}

// logTail is the end of a container's log, for error messages.
func (e *Env) logTail(c testcontainers.Container, n int) string {
	if c == nil {
		return ""
	}
	return tailOf(e.containerLogs(c.GetContainerID()), n)
}

func (e *Env) containerLogs(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return e.logs(ctx, id, "50")
}

// fullLogs is a container's whole log (up to 64 MiB).
func (e *Env) fullLogs(ctx context.Context, id string) string { return e.logs(ctx, id, "all") }

func (e *Env) logs(ctx context.Context, id, tail string) string {
	rc, err := e.cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: tail})
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 64<<20))
	return string(b)
}

func tailOf(logs string, n int) string {
	lines := strings.Split(strings.TrimRight(stripMux(logs), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 || (len(lines) == 1 && lines[0] == "") {
		return ""
	}
	return "; container log ends: " + strings.Join(lines, " | ")
}

// stripMux drops the 8-byte stream headers of a non-TTY container log.
func stripMux(s string) string {
	var out strings.Builder
	b := []byte(s)
	for len(b) >= 8 && (b[0] == 1 || b[0] == 2) && b[1] == 0 && b[2] == 0 && b[3] == 0 {
		size := int(b[4])<<24 | int(b[5])<<16 | int(b[6])<<8 | int(b[7])
		b = b[8:]
		if size > len(b) {
			size = len(b)
		}
		out.Write(b[:size])
		b = b[size:]
	}
	if out.Len() == 0 {
		return s
	}
	return out.String()
}
