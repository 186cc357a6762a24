package gatewaysim

import (
	"math/rand/v2"
	"time"
)

// faultEntry is an installed fault. Guarded by Sim.mu.
type faultEntry struct {
	id    string
	fault Fault
	fired int
}

func (e *faultEntry) exhausted() bool {
	return e.fault.Times > 0 && e.fired >= e.fault.Times
}

// matches checks the fields in a fixed order and draws from the seeded
// stream last, only when everything else matched, so the draws (and hence a
// run) depend only on the seed and the matching requests.
func (e *faultEntry) matches(orderID string, nth int64, rnd *rand.Rand) bool {
	m := e.fault.Match
	switch {
	case e.exhausted() || e.fault.Validate() != nil:
		return false
	case m.OrderID != "" && m.OrderID != orderID:
		return false
	case m.Nth != 0 && int64(m.Nth) != nth:
		return false
	case m.Probability > 0 && m.Probability < 1:
		return rnd.Float64() < m.Probability
	}
	return true
}

// firing is a fault that fired on one request.
type firing struct {
	id      string
	kind    FaultKind
	latency time.Duration
}

// plan is what the matched faults do to one request: at most one delay and
// at most one outcome, each the first installed fault of its class that
// matches.
type plan struct {
	delay   *firing // a Latency fault
	outcome *firing // any other kind
}

// wait is the total delay before the gateway decides.
func (p plan) wait() time.Duration {
	var d time.Duration
	if p.delay != nil {
		d += p.delay.latency
	}
	if p.outcome != nil {
		d += p.outcome.latency
	}
	return d
}

// kind is the outcome fault's kind, "" when the request is not faulted.
func (p plan) kind() FaultKind {
	if p.outcome == nil {
		return ""
	}
	return p.outcome.kind
}

// faultTable holds installed faults in insertion order.
type faultTable struct {
	entries []*faultEntry
}

func (t *faultTable) add(id string, f Fault) {
	t.entries = append(t.entries, &faultEntry{id: id, fault: f})
}

func (t *faultTable) remove(id string) bool {
	for i, e := range t.entries {
		if e.id == id {
			t.entries = append(t.entries[:i:i], t.entries[i+1:]...)
			return true
		}
	}
	return false
}

func (t *faultTable) clear() { t.entries = nil }

// plan fires the faults that match a request and counts their firings.
func (t *faultTable) plan(orderID string, nth int64, rnd *rand.Rand) plan {
	var p plan
	for _, e := range t.entries {
		slot := &p.outcome
		if !e.fault.Kind.outcome() {
			slot = &p.delay
		}
		if *slot != nil || !e.matches(orderID, nth, rnd) {
			continue
		}
		e.fired++
		*slot = &firing{id: e.id, kind: e.fault.Kind, latency: e.fault.Latency}
	}
	return p
}

func (t *faultTable) list() []FaultStatus {
	out := make([]FaultStatus, len(t.entries))
	for i, e := range t.entries {
		out[i] = FaultStatus{ID: e.id, Fault: e.fault, Fired: e.fired}
	}
	return out
}

// AddFault installs a fault and returns its id. Faults are matched in the
// order they were added; the first matching Latency fault and the first
// matching fault of any other kind fire on a request.
func (s *Sim) AddFault(f Fault) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultSeq++
	id := serialID("flt_", s.faultSeq)
	s.faults.add(id, f)
	s.log.Info("fault added", "fault_id", id, "kind", f.Kind)
	return id
}

// RemoveFault uninstalls a fault; removing an unknown id is a no-op, so a
// harness can clean up unconditionally.
func (s *Sim) RemoveFault(id string) { _ = s.removeFault(id) }

func (s *Sim) removeFault(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.faults.remove(id) {
		return ErrUnknownFault
	}
	return nil
}

// ClearFaults uninstalls every fault. Held responses stay held: releasing
// them is a separate decision (Release, ReleaseAll).
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.clear()
}

// Faults lists the installed faults with their firing counts, in match order.
func (s *Sim) Faults() []FaultStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults.list()
}
