package docker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// closeTimeout bounds the whole teardown; Close runs on a fresh context
// because it usually runs when the caller's has ended (Ctrl-C, failure).
const closeTimeout = 60 * time.Second

// Close removes every container, volume and the network the Env made: first what
// it tracked, then anything else carrying its idemcheck.run label (a
// container created while Start was being cancelled). It releases gateway
// holds first so that no SUT handler waits on them. Close is idempotent.
func (e *Env) Close() error {
	e.closeOnce.Do(func() {
		e.closed.Store(true)
		if e.gateway != nil {
			e.gateway.close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		logErr := e.saveLogs(ctx)
		e.mu.Lock()
		ids := append([]string(nil), e.created...)
		var netIDs []string
		for _, n := range e.networks {
			if n.id != "" {
				netIDs = append(netIDs, n.id)
			}
		}
		e.mu.Unlock()
		err := removeContainers(ctx, e.cli, ids)
		err = errors.Join(err, removeRun(ctx, e.cli, e.runID, netIDs...))
		e.closeErr = errors.Join(err, logErr, e.cli.Close())
		e.log.Info("docker environment removed", "containers", len(ids))
	})
	return e.closeErr
}

// removeContainers force-removes containers in parallel (a paused one is
// removed too: the engine kills it).
func removeContainers(ctx context.Context, cli *testcontainers.DockerClient, ids []string) error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			_, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			if err != nil && !isNotFound(err) {
				errs[i] = fmt.Errorf("remove container %.12s: %w", id, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// removeRun removes whatever still carries idemcheck.run=runID ("" = any
// run), containers first (with their volumes), then the volumes left
// without one, then networks (netIDs too, if they lost their label).
func removeRun(ctx context.Context, cli *testcontainers.DockerClient, runID string, netIDs ...string) error {
	label := LabelRun
	if runID != "" {
		label += "=" + runID
	}
	f := make(client.Filters).Add("label", label)
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("list containers %s: %w", label, err)
	}
	var ids []string
	for _, c := range list.Items {
		ids = append(ids, c.ID)
	}
	err = errors.Join(removeContainers(ctx, cli, ids), removeVolumes(ctx, cli, f))
	nets, lerr := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if lerr != nil {
		return errors.Join(err, fmt.Errorf("list networks %s: %w", label, lerr))
	}
	remove := map[string]bool{}
	for _, id := range netIDs {
		remove[id] = true
	}
	for _, n := range nets.Items {
		remove[n.ID] = true
	}
	for id := range remove {
		if _, rerr := cli.NetworkRemove(ctx, id, client.NetworkRemoveOptions{}); rerr != nil && !isNotFound(rerr) {
			err = errors.Join(err, fmt.Errorf("remove network %.12s: %w", id, rerr))
		}
	}
	return err
}

// removeVolumes removes the volumes that match f: the stores' data,
// whose container is gone.
func removeVolumes(ctx context.Context, cli *testcontainers.DockerClient, f client.Filters) error {
	vols, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return fmt.Errorf("list volumes: %w", err)
	}
	var errs []error
	for _, v := range vols.Items {
		if _, err := cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove volume %.12s: %w", v.Name, err))
		}
	}
	return errors.Join(errs...)
}

// RemoveAll removes the containers, volumes and networks of every idemcheck run on
// this engine: the clean-up after a harness that was SIGKILLed (no Close
// ran). `idemcheck clean --docker` is this.
func RemoveAll(ctx context.Context) error {
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	return removeRun(ctx, cli, "", "")
}
