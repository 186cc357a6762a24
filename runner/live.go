package runner

import (
	"maps"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// Examples in flight at once share one environment. The gate keeps one
// example's disruption away from the others' requests, but not from the
// server: a replica killed by one crash wave while another wave's keys
// are still being recovered (a sweeper's or a takeover's gateway call on
// it) delays that recovery, and the other wave's retries, sent a recovery
// window after its own heal, may find its keys still in progress. Judged
// on its own faults only, a correct server was then FAILED on M6 (with 2
// crash waves in flight, once in about 50 certifications).
//
// So a fault beyond one payment (its Scope: a link, a process, a store,
// a gateway rule for every order) is recorded in the history of
// every example in flight while it is active, marked Foreign with the
// name of the example that injected it: each history holds every fault
// its example lived through. The checker then holds an answer to a
// definitive outcome only once every fault, its own or foreign, has
// healed and the recovery window has passed, and excuses an answer that
// a foreign fault on its path disturbed; it never counts a foreign fault
// as the example's own coverage. Converging sends retry until that quiet
// time and the slack (quietFrom).

// sharedFault is one environment-wide fault and its copies in the other
// examples in flight (example -> its fault id).
type sharedFault struct {
	f      history.Fault
	copies map[*execution]int
}

// enter registers p as in flight; the shared faults active now are
// recorded in its history (it starts while they are active).
func (r *Runner) enter(p *execution) {
	r.state.mu.Lock()
	defer r.state.mu.Unlock()
	r.state.live[p] = true
	for sf := range r.state.shared {
		sf.copies[p] = p.liveThrough(sf.f)
	}
}

// exit ends p's time in flight: later faults are not its history.
func (r *Runner) exit(p *execution) {
	r.state.mu.Lock()
	defer r.state.mu.Unlock()
	delete(r.state.live, p)
	for sf := range r.state.shared {
		delete(sf.copies, p)
	}
}

// share records f, which p injected, in every other example in flight
// when it reaches beyond one payment (its Scope: a replica or the whole
// environment), and returns what records its heal there (nil for a fault
// of one payment, which stays in its example). A fault aimed at an order
// may still reach a replica: a kill inside that order's gateway hold.
func (r *Runner) share(p *execution, f history.Fault) (heal func()) {
	p.livedSkew(f)
	if f.Scope == history.Payment {
		return nil
	}
	f.Params = maps.Clone(f.Params)
	delete(f.Params, history.ParamCrashPoint)
	delete(f.Params, history.ParamCrashPayment)
	f.Foreign, f.Fired = p.nonce, history.FiredOnInject
	sf := &sharedFault{f: f, copies: map[*execution]int{}}
	r.state.mu.Lock()
	defer r.state.mu.Unlock()
	for q := range r.state.live {
		if q != p {
			sf.copies[q] = q.liveThrough(f)
		}
	}
	r.state.shared[sf] = true
	return func() {
		r.state.mu.Lock()
		defer r.state.mu.Unlock()
		delete(r.state.shared, sf)
		for q, id := range sf.copies {
			q.healedThrough(id, sf.f)
		}
		p.reconnect(sf.f)
	}
}

// liveThrough records another example's fault f in p's history.
// A clock or zone in force (history.Skews) holds nothing back: its
// relaunches are faults of their own.
func (p *execution) liveThrough(f history.Fault) int {
	id := p.rec.Inject(f)
	p.livedSkew(f)
	if f.ClassOf() == history.Skews {
		return id
	}
	p.mu.Lock()
	p.foreignActive++
	p.mu.Unlock()
	return id
}

// healedThrough records the heal of the foreign fault f, recorded as id.
func (p *execution) healedThrough(id int, f history.Fault) {
	p.rec.Heal(id)
	p.reconnect(f)
	if f.ClassOf() == history.Skews {
		return
	}
	p.mu.Lock()
	p.foreignActive--
	p.healed = time.Now()
	p.mu.Unlock()
}

// reconnect drops p's idle connections once f, now healed, cut the
// harness's own link to a replica: toxiproxy closes the link's
// connections when it goes down, and one still in the client's pool
// when the link comes back a moment later fails the next request sent
// on it with EOF, an indeterminate answer to a request the server never
// saw. In a soak every indeterminate answer outside crash-window's own
// strikes (and concurrent duplicates' 409s) was one, after the crash
// point drop-client-in-hang, which cuts that link in every wave; on a
// key's last request inside its promise it leaves convergence undecided.
// It runs before the gate lets the others' requests through.
func (p *execution) reconnect(f history.Fault) {
	if harness.Link(f.Target).FromClient() {
		p.client.Close()
	}
}

// livedSkew notes the clock skew of f, a fault p lived through (its own
// or another example's): a server whose leases follow a skewed clock may
// recover that much later, so p's recovery windows stretch by the
// largest such skew (the checker allows for the skew in force).
func (p *execution) livedSkew(f history.Fault) {
	p.mu.Lock()
	p.skew = max(p.skew, f.Skew, -f.Skew)
	p.mu.Unlock()
}

// quietFrom is when the environment p lives in last healed (its own
// faults and foreign ones), now while a foreign fault is still active, or
// zero when nothing has healed: recovery windows count from there.
func (p *execution) quietFrom() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.foreignActive > 0 {
		return time.Now()
	}
	return p.healed
}

// quietAt is when the environment p lives in will have been quiet for a
// recovery window (zero when nothing has healed): an answer to a request
// sent before it may come from a server still recovering.
func (p *execution) quietAt() time.Time {
	q := p.quietFrom()
	if q.IsZero() {
		return q
	}
	return q.Add(p.recoveryWindow())
}

// settled is when a converging send of p stops retrying at the earliest:
// the recovery window and the policy's ConvergeSlack after the
// environment last healed (zero when nothing has).
func (p *execution) settled() time.Time {
	q := p.quietFrom()
	if q.IsZero() {
		return q
	}
	return p.pastWindow(q)
}
