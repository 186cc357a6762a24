package docker

import (
	"context"
	"fmt"
	"strings"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/idemcheck/idemcheck/harness"
)

// Proxy ports inside the toxiproxy container, fixed per replica so that
// the client ports can be published when the container is created (before
// any proxy exists). Targets have at most 16 replicas.
func clientPort(i int) int      { return 20000 + i }
func gatewayLinkPort(i int) int { return 20100 + i }
func pgPort(i int) int          { return 20200 + i }

// links are the proxies in the toxiproxy container, driven through its API.
type links struct {
	api     *toxiproxy.Client
	mu      sync.Mutex
	proxies map[harness.Link]*toxiproxy.Proxy
	client  map[int]string // published host address of client->replicaN
}

func newLinks(apiAddr string) *links {
	return &links{api: toxiproxy.NewClient(apiAddr), proxies: map[harness.Link]*toxiproxy.Proxy{}, client: map[int]string{}}
}

// proxyName is the link as a toxiproxy proxy name: "->" is not something
// to put in a URL path.
func proxyName(l harness.Link) string { return strings.ReplaceAll(string(l), "->", "_to_") }

func (ls *links) create(l harness.Link, port int, upstream string) error {
	px, err := ls.api.CreateProxy(proxyName(l), fmt.Sprintf("0.0.0.0:%d", port), upstream)
	if err != nil {
		return fmt.Errorf("proxy %s: %w", l, err)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.proxies[l] = px
	return nil
}

func (ls *links) clientAddr(i int) string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.client[i]
}

// startLinks creates every replica's proxies: client->replicaN to the
// replica's alias, replicaN->gateway and replicaN->postgres to the
// services' aliases, all on the private network.
func (e *Env) startLinks(ctx context.Context) error {
	for i := 0; i < e.target.Replicas; i++ {
		if err := e.links.create(harness.ClientLink(i), clientPort(i), fmt.Sprintf("replica%d:%d", i, replicaPort)); err != nil {
			return err
		}
		addr, err := hostAddr(ctx, e.tox, fmt.Sprintf("%d/tcp", clientPort(i)))
		if err != nil {
			return err
		}
		e.links.mu.Lock()
		e.links.client[i] = addr
		e.links.mu.Unlock()
		if err := e.links.create(harness.GatewayLink(i), gatewayLinkPort(i), "gateway:12111"); err != nil {
			return err
		}
		if e.pg != nil {
			if err := e.links.create(harness.PostgresLink(i), pgPort(i), "postgres:5432"); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *Env) proxy(l harness.Link) (*toxiproxy.Proxy, error) {
	if e.closed.Load() {
		return nil, harness.ErrClosed
	}
	e.links.mu.Lock()
	defer e.links.mu.Unlock()
	px, ok := e.links.proxies[l]
	if !ok {
		return nil, fmt.Errorf("%w: %s", harness.ErrUnknownLink, l)
	}
	return px, nil
}

// AddToxic puts a toxic on link l through toxiproxy's API.
func (e *Env) AddToxic(l harness.Link, t harness.Toxic) error {
	if _, err := harness.ParseDirection(string(t.Direction)); err != nil {
		return fmt.Errorf("add toxic %s on %s: %w", t.Name, l, err)
	}
	px, err := e.proxy(l)
	if err != nil {
		return err
	}
	tox := t.Toxicity
	if tox == 0 {
		tox = 1 // as in process mode: 0 means always, not never
	}
	if _, err := px.AddToxic(t.Name, t.Type, string(t.Direction), tox, toxiproxy.Attributes(t.Attributes)); err != nil {
		return fmt.Errorf("add toxic %s on %s: %w", t.Name, l, err)
	}
	e.log.Debug("toxic added", "link", l, "toxic", t.Name, "type", t.Type, "direction", t.Direction)
	return nil
}

// RemoveToxic takes toxic name off link l.
func (e *Env) RemoveToxic(_ context.Context, l harness.Link, name string) error {
	px, err := e.proxy(l)
	if err != nil {
		return err
	}
	if err := px.RemoveToxic(name); err != nil {
		return fmt.Errorf("remove toxic %s on %s: %w", name, l, err)
	}
	e.log.Debug("toxic removed", "link", l, "toxic", name)
	return nil
}

// SetLinkEnabled turns link l off (toxiproxy closes its listener and open
// connections) or back on, on the same port: toxiproxy's "down".
func (e *Env) SetLinkEnabled(l harness.Link, enabled bool) error {
	px, err := e.proxy(l)
	if err != nil {
		return err
	}
	e.links.mu.Lock() // Save mutates the shared *Proxy
	defer e.links.mu.Unlock()
	if enabled {
		err = px.Enable()
	} else {
		err = px.Disable()
	}
	if err != nil {
		return fmt.Errorf("set %s enabled=%v: %w", l, enabled, err)
	}
	e.log.Debug("link switched", "link", l, "enabled", enabled)
	return nil
}

// Links lists every link of the Env.
func (e *Env) Links() []harness.Link {
	var stores []string
	if e.pg != nil {
		stores = append(stores, "postgres")
	}
	return harness.Links(len(e.replicas), stores)
}
