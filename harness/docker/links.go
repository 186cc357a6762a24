package docker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/target"
)

// Proxy ports inside the toxiproxy container, fixed per link so that the
// published ones can be published when the container is created (before
// any proxy exists): client->replicaN on 20000+N, replicaN->gateway on
// 20100+N, replicaN->STORE on 20200+100*(STORE's index in target.Stores)+N
// (postgres 202xx, redis 203xx, mysql 204xx). Targets have at most 16
// replicas.
func linkPort(l harness.Link) int {
	from, to, _ := strings.Cut(string(l), "->")
	i := l.Replica()
	switch {
	case from == "client":
		return 20000 + i
	case to == "gateway":
		return 20100 + i
	}
	return 20200 + 100*slices.Index(target.Stores, to) + i
}

// publishedLinks are replica i's links whose proxy port is published on
// loopback: the client link (the harness's requests) and its store links
// (LinkAddr, to reach a store as the replica does).
func (e *Env) publishedLinks(i int) []harness.Link {
	ls := []harness.Link{harness.ClientLink(i)}
	for _, name := range e.target.StoreNames() {
		ls = append(ls, harness.StoreLink(i, name))
	}
	return ls
}

// readyPort is the port of replica i's ready proxy in the toxiproxy
// container: no link, never faulted, published for the harness's ready
// checks alone (a replica publishes no port of its own: it sits on an
// internal network). A link fault cannot fail a restart's ready check.
func readyPort(i int) int { return 20050 + i }

// links are the proxies in the toxiproxy container, driven through its API.
type links struct {
	api     *toxiproxy.Client
	mu      sync.Mutex
	proxies map[harness.Link]*toxiproxy.Proxy
	addrs   map[harness.Link]string // published host address of the published links
	ready   map[int]string          // published host address of each replica's ready proxy
}

func newLinks(apiAddr string) *links {
	return &links{api: toxiproxy.NewClient(apiAddr), proxies: map[harness.Link]*toxiproxy.Proxy{}, addrs: map[harness.Link]string{}, ready: map[int]string{}}
}

// readyAddr is the published address of replica i's ready proxy.
func (ls *links) readyAddr(i int) string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.ready[i]
}

// proxyName is the link as a toxiproxy proxy name: "->" is not something
// to put in a URL path.
func proxyName(l harness.Link) string { return strings.ReplaceAll(string(l), "->", "_to_") }

// create makes link l's proxy on its port, to upstream.
func (ls *links) create(l harness.Link, upstream string) error {
	px, err := ls.api.CreateProxy(proxyName(l), fmt.Sprintf("0.0.0.0:%d", linkPort(l)), upstream)
	if err != nil {
		return fmt.Errorf("proxy %s: %w", l, err)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.proxies[l] = px
	return nil
}

func (ls *links) addr(l harness.Link) string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.addrs[l]
}

// startLinks creates every replica's proxies, on the private network,
// and notes where the published ones are published (toxiproxy is never
// restarted, so that stays true).
func (e *Env) startLinks(ctx context.Context) error {
	for _, l := range harness.Links(e.target.Replicas, e.target.StoreNames()) {
		if err := e.links.create(l, e.upstream(l)); err != nil {
			return err
		}
	}
	for i := 0; i < e.target.Replicas; i++ {
		if _, err := e.links.api.CreateProxy(fmt.Sprintf("ready_to_replica%d", i), fmt.Sprintf("0.0.0.0:%d", readyPort(i)), fmt.Sprintf("replica%d:%d", i, replicaPort)); err != nil {
			return fmt.Errorf("ready proxy of replica %d: %w", i, err)
		}
		addr, err := hostAddr(ctx, e.tox, fmt.Sprintf("%d/tcp", readyPort(i)))
		if err != nil {
			return err
		}
		e.links.mu.Lock()
		e.links.ready[i] = addr
		e.links.mu.Unlock()
		for _, l := range e.publishedLinks(i) {
			addr, err := hostAddr(ctx, e.tox, fmt.Sprintf("%d/tcp", linkPort(l)))
			if err != nil {
				return err
			}
			e.links.mu.Lock()
			e.links.addrs[l] = addr
			e.links.mu.Unlock()
		}
	}
	return nil
}

// upstream is where link l leads, by network alias: client->replicaN to
// the replica, replicaN->gateway and replicaN->STORE to the service. An
// alias survives a restart of what it names, whatever its address.
func (e *Env) upstream(l harness.Link) string {
	from, to, _ := strings.Cut(string(l), "->")
	switch {
	case from == "client":
		return fmt.Sprintf("%s:%d", to, replicaPort)
	case to == "gateway":
		return fmt.Sprintf("gateway:%d", gatewayViaPort(l.Replica()))
	}
	return fmt.Sprintf("%s:%d", to, e.stores[to].kind.port)
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

// LinkStates reads every link's proxy from toxiproxy's API, in one call.
func (e *Env) LinkStates() (map[harness.Link]harness.LinkState, error) {
	if e.closed.Load() {
		return nil, harness.ErrClosed
	}
	all, err := e.links.api.Proxies()
	if err != nil {
		return nil, fmt.Errorf("link states: %w", err)
	}
	out := map[harness.Link]harness.LinkState{}
	for _, l := range e.Links() {
		px, ok := all[proxyName(l)]
		if !ok {
			out[l] = harness.LinkState{Missing: true}
			continue
		}
		st := harness.LinkState{Enabled: px.Enabled}
		for _, t := range px.ActiveToxics {
			st.Toxics = append(st.Toxics, t.Name)
		}
		slices.Sort(st.Toxics)
		out[l] = st
	}
	return out, nil
}

// LinkAddr is the loopback address link l's proxy is published on: the
// client and store links (reach a store through it as the replica does);
// "" for a gateway link or an unknown one. It survives
// SetLinkEnabled(false) and back, and store restarts.
func (e *Env) LinkAddr(l harness.Link) string { return e.links.addr(l) }

// Links lists every link of the Env: per replica client, gateway and one
// to each store the target needs.
func (e *Env) Links() []harness.Link { return harness.Links(len(e.replicas), e.target.StoreNames()) }
