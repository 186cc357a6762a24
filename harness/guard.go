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
// set, and after each operation (an inject or a heal: a toxic, a link, a
// rule, a kill, a pause, a restart) it proves that the environment is
// exactly as idemcheck left it. It also follows the gateway's events and
// keeps every request for a control API that reached the provider's
// address (gatewaysim.EventForeign). What it finds is evidence for T1
// (Evidence); it never changes what it found back.
//
// A proof never delays a fault: one goroutine proves after the
// operations that ask for it (several at once make one proof), reading
// toxiproxy and the gateway while no operation of idemcheck's that
// changes them is under way, and discards a reading that one began
// during; the next operation's end asks again.
type Guard struct {
	Env
	ctl   *guardedController
	start time.Time

	mu       sync.Mutex
	toxics   map[Link]map[string]bool // what idemcheck put on each link
	down     map[Link]bool            // the links idemcheck took down
	rules    map[string]gatewaysim.Fault
	inflight int           // operations under way that change toxics, links or rules
	gen      uint64        // bumped when one starts and when it ends
	owed     string        // the operation the next proof follows ("" when none is owed)
	settled  chan struct{} // closed and replaced when an operation ends
	touches  []history.Touch
	seen     map[string]bool // a touch is reported once
	repeats  map[string]int  // a foreign request's count, by what and by whom
	proofs   int
	other    map[string]int // requests that are not the provider's API nor a control API, by "METHOD path"

	kick     chan struct{} // a proof is owed (buffered 1)
	quit     chan struct{}
	proverOK chan struct{} // closed when the prover has returned

	evMu     sync.Mutex
	lastSeq  int64
	advanced chan struct{} // closed and replaced when lastSeq grows
	stop     func()
	done     chan struct{}
	stopOnce sync.Once
}

// NewGuard wraps env; Stop ends its event subscription and its prover
// (Close does too).
func NewGuard(env Env) *Guard {
	g := &Guard{Env: env, start: time.Now(), toxics: map[Link]map[string]bool{}, down: map[Link]bool{},
		rules: map[string]gatewaysim.Fault{}, seen: map[string]bool{}, repeats: map[string]int{}, other: map[string]int{},
		settled: make(chan struct{}), kick: make(chan struct{}, 1), quit: make(chan struct{}), proverOK: make(chan struct{}),
		advanced: make(chan struct{}), done: make(chan struct{})}
	g.ctl = &guardedController{Controller: env.GatewayController(), g: g}
	events, cancel := env.GatewayController().SubscribeSince(0)
	g.stop = cancel
	go g.follow(events)
	go g.prover()
	return g
}

// prover makes the proofs operations ask for, one at a time.
func (g *Guard) prover() {
	defer close(g.proverOK)
	for {
		select {
		case <-g.quit:
			return
		case <-g.kick:
			g.prove()
		}
	}
}

// ask notes that a proof is owed after operation what, and wakes the
// prover.
func (g *Guard) ask(what string) {
	g.mu.Lock()
	g.owed = what
	g.mu.Unlock()
	select {
	case g.kick <- struct{}{}:
	default: // one is owed already: it will follow this operation too
	}
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

// Stop ends the guard's event subscription and its prover.
func (g *Guard) Stop() {
	g.stopOnce.Do(func() {
		close(g.quit)
		<-g.proverOK
		g.stop()
		<-g.done
	})
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
	g.proveBy(ctx, "at the end of the run")
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

// proveBy proves the environment now, waiting (bounded by ctx) for the
// operations under way to end; found says when.
func (g *Guard) proveBy(ctx context.Context, found string) {
	for ctx.Err() == nil {
		g.mu.Lock()
		g.owed = found
		busy, settled := g.inflight > 0, g.settled
		g.mu.Unlock()
		if !busy && g.prove() {
			return
		}
		select {
		case <-settled:
		case <-ctx.Done():
		}
	}
}

// prove reads the links and the gateway's rules while no operation of
// idemcheck's changes them, and compares them with what idemcheck set.
// It reports whether it proved: a reading that an operation overlapped,
// or that failed (a closed environment), proves nothing and is not
// counted.
func (g *Guard) prove() bool {
	g.mu.Lock()
	gen, busy := g.gen, g.inflight > 0
	g.mu.Unlock()
	if busy {
		return false // the operation's end asks again
	}
	states, err := g.Env.LinkStates()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), proveTimeout)
	defer cancel()
	rules, err := g.Env.GatewayController().Faults(ctx)
	if err != nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gen != gen {
		return false
	}
	found := "at the proof after " + g.owed
	if strings.HasPrefix(g.owed, "at ") {
		found = g.owed
	}
	g.owed = ""
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
	return true
}

// begin marks an operation that changes toxics, links or rules as under
// way: no proof reads while it is.
func (g *Guard) begin() {
	g.mu.Lock()
	g.inflight++
	g.gen++
	g.mu.Unlock()
}

// end ends it: update, when it succeeded, records what it set (g.mu
// held); when it failed, what it may have half set is taken as it is
// (adopt), an uncertain state of idemcheck's own making being no touch.
// A proof is asked for after it.
func (g *Guard) end(what string, err error, update func(), adopt func()) error {
	g.mu.Lock()
	if err == nil {
		update()
	} else {
		adopt()
	}
	g.inflight--
	g.gen++
	close(g.settled)
	g.settled = make(chan struct{})
	g.mu.Unlock()
	g.ask(what)
	return err
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
// answer was lost); g.mu held.
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

// AddToxic adds the toxic; a proof follows.
func (g *Guard) AddToxic(l Link, t Toxic) error {
	g.begin()
	err := g.Env.AddToxic(l, t)
	return g.end("adding toxic "+t.Name+" on "+string(l), err, func() {
		if g.toxics[l] == nil {
			g.toxics[l] = map[string]bool{}
		}
		g.toxics[l][t.Name] = true
	}, g.adopt)
}

// RemoveToxic removes the toxic; a proof follows.
func (g *Guard) RemoveToxic(ctx context.Context, l Link, name string) error {
	g.begin()
	err := g.Env.RemoveToxic(ctx, l, name)
	return g.end("removing toxic "+name+" from "+string(l), err, func() { delete(g.toxics[l], name) }, g.adopt)
}

// SetLinkEnabled switches the link; a proof follows.
func (g *Guard) SetLinkEnabled(l Link, enabled bool) error {
	g.begin()
	err := g.Env.SetLinkEnabled(l, enabled)
	return g.end(fmt.Sprintf("taking link %s %s", l, upDown(enabled)), err, func() { g.down[l] = !enabled }, g.adopt)
}

// Kill kills replica i; a proof follows.
func (g *Guard) Kill(i int) error {
	defer g.ask(fmt.Sprintf("killing replica%d", i))
	return g.Env.Kill(i)
}

// Pause pauses replica i; a proof follows.
func (g *Guard) Pause(i int) error {
	defer g.ask(fmt.Sprintf("pausing replica%d", i))
	return g.Env.Pause(i)
}

// Resume resumes replica i; a proof follows.
func (g *Guard) Resume(i int) error {
	defer g.ask(fmt.Sprintf("resuming replica%d", i))
	return g.Env.Resume(i)
}

// Restart restarts replica i; a proof follows.
func (g *Guard) Restart(ctx context.Context, i int) error {
	defer g.ask(fmt.Sprintf("restarting replica%d", i))
	return g.Env.Restart(ctx, i)
}

// RestartStore restarts the store; a proof follows.
func (g *Guard) RestartStore(ctx context.Context, store string, crash bool) error {
	defer g.ask("restarting " + store)
	return g.Env.RestartStore(ctx, store, crash)
}

// Relaunch relaunches replica i; a proof follows.
func (g *Guard) Relaunch(ctx context.Context, i int, edit func(*Launch)) error {
	defer g.ask(fmt.Sprintf("relaunching replica%d", i))
	return g.Env.Relaunch(ctx, i, edit)
}

// guardedController is the gateway's controller with rules armed and
// removed through the guard.
type guardedController struct {
	gatewaysim.Controller
	g *Guard
}

// AddFault arms the rule; a proof follows.
func (c *guardedController) AddFault(f gatewaysim.Fault) (string, error) {
	c.g.begin()
	id, err := c.Controller.AddFault(f)
	return id, c.g.end("arming gateway rule "+id+" ("+string(f.Kind)+")", err, func() { c.g.rules[id] = f }, c.g.adoptRules)
}

// RemoveFault removes the rule; a proof follows.
func (c *guardedController) RemoveFault(id string) error {
	c.g.begin()
	err := c.Controller.RemoveFault(id)
	return c.g.end("removing gateway rule "+id, err, func() { delete(c.g.rules, id) }, c.g.adoptRules)
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
