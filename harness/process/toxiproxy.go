package process

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/internal/boundedlog"
	"github.com/rs/zerolog"
)

// proxies is the embedded toxiproxy: its proxy collection used in-process.
// The HTTP API (ApiServer.Listen) is deliberately not started: it has no
// shutdown (ListenAndServe, and log.Fatal on error), so it would leak a
// port past Close, and faults need no network round trip to add a toxic.
type proxies struct {
	server *toxiproxy.ApiServer
	log    *closableLog
	addrs  map[harness.Link]string // listen address of every proxy, fixed at add
}

// closableLog is toxiproxy's log file. Link goroutines may still log after
// the proxies stopped; once closed it drops their lines silently instead of
// zerolog complaining on stderr about a closed file.
type closableLog struct {
	mu     sync.Mutex
	f      *boundedlog.File
	closed bool
}

func (l *closableLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return len(p), nil
	}
	return l.f.Write(p)
}

func (l *closableLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.f.Close()
}

// newProxies creates the embedded server logging at warn level to logPath:
// toxiproxy logs every accepted connection at info, which is noise at the
// rates a workload runs.
func newProxies(logPath string) (*proxies, error) {
	f, err := boundedlog.Create(logPath, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy log: %w", err)
	}
	log := &closableLog{f: f}
	logger := zerolog.New(log).With().Timestamp().Logger().Level(zerolog.WarnLevel)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), logger)
	return &proxies{server: srv, log: log, addrs: map[harness.Link]string{}}, nil
}

// add starts a proxy for link on a fresh loopback port and returns that
// address.
func (p *proxies) add(l harness.Link, upstream string) (string, error) {
	px := toxiproxy.NewProxy(p.server, string(l), "127.0.0.1:0", upstream)
	if err := p.server.Collection.Add(px, true); err != nil {
		return "", fmt.Errorf("proxy %s: %w", l, err)
	}
	p.addrs[l] = px.Listen
	return px.Listen, nil
}

func (p *proxies) get(l harness.Link) (*toxiproxy.Proxy, error) {
	px, err := p.server.Collection.Get(string(l))
	if err != nil {
		return nil, fmt.Errorf("%w: %s", harness.ErrUnknownLink, l)
	}
	return px, nil
}

// close stops every proxy (listeners and open connections).
func (p *proxies) close() error {
	err := p.server.Collection.Clear()
	return errors.Join(err, p.log.Close())
}

func toxicJSON(t harness.Toxic) ([]byte, error) {
	tox := t.Toxicity
	if tox == 0 {
		tox = 1
	}
	return json.Marshal(map[string]any{
		"name": t.Name, "type": t.Type, "stream": string(t.Direction),
		"toxicity": tox, "attributes": t.Attributes,
	})
}

// AddToxic puts a toxic on link l. It affects open connections as well as
// new ones, except that reset_peer only sends a real RST (SO_LINGER 0) on
// connections opened after it was added; on older ones it is a plain close.
func (e *Env) AddToxic(l harness.Link, t harness.Toxic) error {
	if _, err := harness.ParseDirection(string(t.Direction)); err != nil {
		return fmt.Errorf("add toxic %s on %s: %w", t.Name, l, err)
	}
	px, err := e.Proxy(l)
	if err != nil {
		return err
	}
	body, err := toxicJSON(t)
	if err != nil {
		return fmt.Errorf("add toxic %s on %s: %w", t.Name, l, err)
	}
	if _, err := px.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
		return fmt.Errorf("add toxic %s on %s: %w", t.Name, l, err)
	}
	e.log.Debug("toxic added", "link", l, "toxic", t.Name, "type", t.Type, "direction", t.Direction)
	return nil
}

// RemoveToxic takes toxic name off link l. Removing a timeout toxic closes
// the connections it stalled (toxiproxy's cleanup), it does not let them
// resume.
func (e *Env) RemoveToxic(ctx context.Context, l harness.Link, name string) error {
	px, err := e.Proxy(l)
	if err != nil {
		return err
	}
	if err := px.Toxics.RemoveToxic(ctx, name); err != nil {
		return fmt.Errorf("remove toxic %s on %s: %w", name, l, err)
	}
	e.log.Debug("toxic removed", "link", l, "toxic", name)
	return nil
}

// SetLinkEnabled turns link l off (its listener closes, open connections
// are closed, new dials are refused) or back on, on the same address. This
// is toxiproxy's "down".
func (e *Env) SetLinkEnabled(l harness.Link, enabled bool) error {
	px, err := e.Proxy(l)
	if err != nil {
		return err
	}
	px.Lock()
	upstream := px.Upstream
	px.Unlock()
	in := &toxiproxy.Proxy{Listen: e.proxies.addrs[l], Upstream: upstream, Enabled: enabled}
	if err := px.Update(in); err != nil {
		return fmt.Errorf("set %s enabled=%v: %w", l, enabled, err)
	}
	e.log.Debug("link switched", "link", l, "enabled", enabled)
	return nil
}

// LinkStates reads every link's proxy from the embedded toxiproxy.
func (e *Env) LinkStates() (map[harness.Link]harness.LinkState, error) {
	out := map[harness.Link]harness.LinkState{}
	for _, l := range e.Links() {
		px, err := e.Proxy(l)
		if err != nil {
			if errors.Is(err, harness.ErrUnknownLink) {
				out[l] = harness.LinkState{Missing: true}
				continue
			}
			return nil, err
		}
		px.Lock()
		st := harness.LinkState{Enabled: px.Enabled}
		px.Unlock()
		for _, t := range px.Toxics.GetToxicArray() {
			if w, ok := t.(*toxics.ToxicWrapper); ok {
				st.Toxics = append(st.Toxics, w.Name)
			}
		}
		slices.Sort(st.Toxics)
		out[l] = st
	}
	return out, nil
}

// Proxy is the toxiproxy proxy behind link l, for what AddToxic and
// SetLinkEnabled do not cover (listing toxics, updating one in place).
func (e *Env) Proxy(l harness.Link) (*toxiproxy.Proxy, error) {
	if e.closed.Load() {
		return nil, harness.ErrClosed
	}
	return e.proxies.get(l)
}

// LinkAddr is the loopback address link l's proxy listens on ("" for an
// unknown link); it survives SetLinkEnabled(false) and back.
func (e *Env) LinkAddr(l harness.Link) string { return e.proxies.addrs[l] }

// Links lists every link of the Env: per replica client, gateway and one
// to each store the target needs.
func (e *Env) Links() []harness.Link { return harness.Links(len(e.replicas), e.target.StoreNames()) }
