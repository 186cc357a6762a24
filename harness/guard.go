package harness

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// LinkState is a link as toxiproxy has it: up (Enabled) or down, the
// names of its toxics (sorted), or Missing when its proxy is gone.
type LinkState struct {
	Enabled bool
	Toxics  []string
	Missing bool
}

// proveTimeout bounds one proof's reads (toxiproxy's API, the gateway's
// fault rules).
const proveTimeout = 5 * time.Second

// Guard is an Env whose every fault operation passes through it: it
// knows the toxics, the links taken down and the gateway rules idemcheck
// set, and before each operation (an inject or a heal: a toxic, a link,
// a rule, a kill, a pause, a restart) it proves that the environment is
// exactly as idemcheck left it. It also follows the gateway's events and
// keeps every request for a control API that reached the provider's
// address (gatewaysim.EventForeign). What it finds is evidence for T1
// (Evidence); it never changes what it found back.
//
// Fault operations are serialised with the proofs (one mutex), so a
// proof never sees another example's operation half done.
type Guard struct {
	Env
	ctl   *guardedController
	start time.Time

	mu      sync.Mutex
	toxics  map[Link]map[string]bool // what idemcheck put on each link
	down    map[Link]bool            // the links idemcheck took down
	rules   map[string]gatewaysim.Fault
	touches []history.Touch
	seen    map[string]bool // a touch is reported once
	repeats map[string]int  // a foreign request's count, by what and by whom
	proofs  int
	other   map[string]int // requests that are not the provider's API nor a control API, by "METHOD path"

	evMu     sync.Mutex
	lastSeq  int64
	advanced chan struct{} // closed and replaced when lastSeq grows
	stop     func()
	done     chan struct{}
}

// NewGuard wraps env; Stop ends its event subscription (Close does too).
func NewGuard(env Env) *Guard {
	g := &Guard{Env: env, start: time.Now(), toxics: map[Link]map[string]bool{}, down: map[Link]bool{},
		rules: map[string]gatewaysim.Fault{}, seen: map[string]bool{}, repeats: map[string]int{}, other: map[string]int{},
		advanced: make(chan struct{}), done: make(chan struct{})}
	g.ctl = &guardedController{Controller: env.GatewayController(), g: g}
	events, cancel := env.GatewayController().SubscribeSince(0)
	g.stop = cancel
	go g.follow(events)
	return g
}

// follow records every foreign request the gateway reports.
func (g *Guard) follow(events <-chan gatewaysim.Event) {
	defer close(g.done)
	for ev := range events {
		if ev.Type == gatewaysim.EventForeign {
			g.foreign(ev)
		}
		g.evMu.Lock()
		g.lastSeq = max(g.lastSeq, ev.Seq)
		close(g.advanced)
		g.advanced = make(chan struct{})
		g.evMu.Unlock()
	}
}

func (g *Guard) foreign(ev gatewaysim.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	req := ev.Method + " " + ev.Path
	if !gatewaysim.IsHarnessPath(ev.Path) {
		g.other[req]++
		return
	}
	by := ev.Via
	if r, ok := strings.CutSuffix(ev.Via, "->gateway"); ok {
		by = r
	}
	if by == "" {
		by = "unknown (the provider's own address)"
	}
	what := req + " on the provider's address (answered with the provider's 404)"
	if n := g.repeats[what+"\x00"+by]; n > 0 {
		g.repeats[what+"\x00"+by] = n + 1 // the first is the evidence; Evidence counts the rest
		return
	}
	g.repeats[what+"\x00"+by] = 1
	g.touches = append(g.touches, history.Touch{At: ev.Time.Sub(g.start), What: what,
		By: by, Found: "as it arrived at the gateway (" + orUnknown(ev.Via) + ")"})
}

func orUnknown(s string) string {
	if s == "" {
		return "on no named link"
	}
	return "by " + s
}

// Stop ends the guard's event subscription.
func (g *Guard) Stop() {
	g.stop()
	<-g.done
}

// Close stops the guard and closes the environment.
func (g *Guard) Close() error {
	g.Stop()
	return g.Env.Close()
}

// GatewayController is the environment's, with AddFault and RemoveFault
// passing through the guard.
func (g *Guard) GatewayController() gatewaysim.Controller { return g.ctl }

// Evidence proves the environment once more, waits (bounded by ctx) for
// the gateway's events up to now to arrive, and returns what was found:
// the touches in the order found (a request repeated by the same replica
// once, with how many times it came), how many proofs were made, and the
// other requests that were not the provider's API (by "METHOD path",
// with their count).
func (g *Guard) Evidence(ctx context.Context) (touches []history.Touch, proofs int, other map[string]int) {
	g.check("at the end of the run")
	if seq, err := g.Env.GatewayController().LastSeq(ctx); err == nil {
		g.waitSeq(ctx, seq)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	touches = slices.Clone(g.touches)
	for i, t := range touches {
		if n := g.repeats[t.What+"\x00"+t.By]; n > 1 {
			touches[i].What += fmt.Sprintf(", %d times in all", n)
		}
	}
	return touches, g.proofs, maps.Clone(g.other)
}

func (g *Guard) waitSeq(ctx context.Context, seq int64) {
	for {
		g.evMu.Lock()
		got, wait := g.lastSeq, g.advanced
		g.evMu.Unlock()
		if got >= seq {
			return
		}
		select {
		case <-wait:
		case <-g.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

// check proves the environment, found says when.
func (g *Guard) check(found string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prove(found)
}

// prove compares the links and the gateway's rules with what idemcheck
// set, g.mu held; a read that fails (a closed environment) proves
// nothing and is not counted.
func (g *Guard) prove(found string) {
	states, err := g.Env.LinkStates()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), proveTimeout)
	defer cancel()
	rules, err := g.Env.GatewayController().Faults(ctx)
	if err != nil {
		return
	}
	g.proofs++
	for _, l := range slices.Sorted(maps.Keys(states)) {
		st := states[l]
		if st.Missing {
			g.touch(string(l), "the proxy of link "+string(l)+" is gone", found)
			continue
		}
		if st.Enabled == g.down[l] {
			g.touch(string(l), fmt.Sprintf("link %s is %s; idemcheck left it %s", l, upDown(st.Enabled), upDown(!g.down[l])), found)
		}
		for _, name := range st.Toxics {
			if !g.toxics[l][name] {
				g.touch(string(l), fmt.Sprintf("toxic %s on link %s, which idemcheck did not put there", name, l), found)
			}
		}
		for name := range g.toxics[l] {
			if !slices.Contains(st.Toxics, name) {
				g.touch(string(l), fmt.Sprintf("toxic %s, which idemcheck put on link %s, is gone", name, l), found)
			}
		}
	}
	const byCtl = "unknown (the gateway's control API)"
	have := map[string]bool{}
	for _, r := range rules {
		have[r.ID] = true
		want, ok := g.rules[r.ID]
		switch {
		case !ok:
			g.touch(byCtl, fmt.Sprintf("gateway rule %s (%s), which idemcheck did not arm", r.ID, r.Fault.Kind), found)
		case want != r.Fault:
			g.touch(byCtl, fmt.Sprintf("gateway rule %s (%s) was changed", r.ID, r.Fault.Kind), found)
		}
	}
	for id, f := range g.rules {
		if !have[id] {
			g.touch(byCtl, fmt.Sprintf("gateway rule %s (%s), which idemcheck armed, is gone", id, f.Kind), found)
		}
	}
}

func upDown(enabled bool) string {
	if enabled {
		return "up"
	}
	return "down"
}

// touch records one finding, once.
func (g *Guard) touch(by, what, found string) {
	if g.seen[what] {
		return
	}
	g.seen[what] = true
	g.touches = append(g.touches, history.Touch{At: time.Since(g.start), What: what, By: by, Found: found})
}

// adopt takes the links as they are now for what idemcheck set, after
// one of its own operations failed half-way (a toxic added while the
// answer was lost): an uncertain state of its own making is no touch.
func (g *Guard) adopt() {
	states, err := g.Env.LinkStates()
	if err != nil {
		return
	}
	for l, st := range states {
		g.down[l] = !st.Enabled
		g.toxics[l] = map[string]bool{}
		for _, name := range st.Toxics {
			g.toxics[l][name] = true
		}
	}
}

// AddToxic proves the environment, then adds the toxic.
func (g *Guard) AddToxic(l Link, t Toxic) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prove("before adding toxic " + t.Name + " on " + string(l))
	if err := g.Env.AddToxic(l, t); err != nil {
		g.adopt()
		return err
	}
	if g.toxics[l] == nil {
		g.toxics[l] = map[string]bool{}
	}
	g.toxics[l][t.Name] = true
	return nil
}

// RemoveToxic proves the environment, then removes the toxic.
func (g *Guard) RemoveToxic(ctx context.Context, l Link, name string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prove("before removing toxic " + name + " from " + string(l))
	if err := g.Env.RemoveToxic(ctx, l, name); err != nil {
		g.adopt()
		return err
	}
	delete(g.toxics[l], name)
	return nil
}

// SetLinkEnabled proves the environment, then switches the link.
func (g *Guard) SetLinkEnabled(l Link, enabled bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prove(fmt.Sprintf("before taking link %s %s", l, upDown(enabled)))
	if err := g.Env.SetLinkEnabled(l, enabled); err != nil {
		g.adopt()
		return err
	}
	g.down[l] = !enabled
	return nil
}

// Kill proves the environment, then kills replica i.
func (g *Guard) Kill(i int) error {
	g.check(fmt.Sprintf("before killing replica%d", i))
	return g.Env.Kill(i)
}

// Pause proves the environment, then pauses replica i.
func (g *Guard) Pause(i int) error {
	g.check(fmt.Sprintf("before pausing replica%d", i))
	return g.Env.Pause(i)
}

// Resume proves the environment, then resumes replica i.
func (g *Guard) Resume(i int) error {
	g.check(fmt.Sprintf("before resuming replica%d", i))
	return g.Env.Resume(i)
}

// Restart proves the environment, then restarts replica i.
func (g *Guard) Restart(ctx context.Context, i int) error {
	g.check(fmt.Sprintf("before restarting replica%d", i))
	return g.Env.Restart(ctx, i)
}

// RestartStore proves the environment, then restarts the store.
func (g *Guard) RestartStore(ctx context.Context, store string, crash bool) error {
	g.check("before restarting " + store)
	return g.Env.RestartStore(ctx, store, crash)
}

// Relaunch proves the environment, then relaunches replica i.
func (g *Guard) Relaunch(ctx context.Context, i int, edit func(*Launch)) error {
	g.check(fmt.Sprintf("before relaunching replica%d", i))
	return g.Env.Relaunch(ctx, i, edit)
}

// guardedController is the gateway's controller with rules armed and
// removed through the guard.
type guardedController struct {
	gatewaysim.Controller
	g *Guard
}

// AddFault proves the environment, then arms the rule.
func (c *guardedController) AddFault(f gatewaysim.Fault) (string, error) {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	c.g.prove("before arming a gateway " + string(f.Kind) + " rule")
	id, err := c.Controller.AddFault(f)
	if err != nil {
		c.g.adoptRules()
		return "", err
	}
	c.g.rules[id] = f
	return id, nil
}

// RemoveFault proves the environment, then removes the rule.
func (c *guardedController) RemoveFault(id string) error {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	c.g.prove("before removing gateway rule " + id)
	if err := c.Controller.RemoveFault(id); err != nil {
		c.g.adoptRules()
		return err
	}
	delete(c.g.rules, id)
	return nil
}

// ForgetAfter passes a soak's retention on to a gateway that can forget
// what the run has accounted for (gatewaysim.Forgetter; the ledger asks
// its controller, which is this one under the guard).
func (c *guardedController) ForgetAfter(d time.Duration) {
	if f, ok := c.Controller.(gatewaysim.Forgetter); ok {
		f.ForgetAfter(d)
	}
}

var _ gatewaysim.Forgetter = (*guardedController)(nil)

// adoptRules takes the gateway's rules as they are for what idemcheck
// armed, after one of its own calls failed half-way; g.mu held.
func (g *Guard) adoptRules() {
	ctx, cancel := context.WithTimeout(context.Background(), proveTimeout)
	defer cancel()
	rules, err := g.Env.GatewayController().Faults(ctx)
	if err != nil {
		return
	}
	g.rules = map[string]gatewaysim.Fault{}
	for _, r := range rules {
		g.rules[r.ID] = r.Fault
	}
}
