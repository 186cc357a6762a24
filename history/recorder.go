package history

import (
	"sort"
	"sync"
	"time"
)

// Recorder collects a history while a run goes on. It stamps everything
// against one monotonic base time (time.Since on a time.Time that carries
// a monotonic reading), so ops from many goroutines, faults and ledger
// charges can be ordered against each other. It never interprets anything.
type Recorder struct {
	base time.Time

	mu      sync.Mutex
	h       History
	nextOp  int
	nextFlt int
}

// NewRecorder starts a recording now.
func NewRecorder(meta History) *Recorder {
	meta.Version = Version
	meta.Ops, meta.Faults, meta.Charges = nil, nil, nil
	return &Recorder{base: time.Now(), h: meta}
}

// Now is the offset from the recording's base time.
func (r *Recorder) Now() time.Duration { return time.Since(r.base) }

// At converts a wall-clock instant (e.g. a ledger timestamp taken with
// time.Now in this process) to an offset on the recording's clock.
func (r *Recorder) At(t time.Time) time.Duration { return r.Clock().At(t) }

// Clock is the recording's clock alone.
func (r *Recorder) Clock() Clock { return Clock{base: r.base} }

// Clock is a recording's clock without the recording: what stamps a
// charge that comes once the recording itself has been let go (a late
// charge the ledger judges with a finished history) on its clock.
type Clock struct{ base time.Time }

// At converts a wall-clock instant to an offset on the clock.
func (c Clock) At(t time.Time) time.Duration { return t.Sub(c.base) }

// Invoke reserves an op id and stamps its invocation.
func (r *Recorder) Invoke(op *Op) {
	r.mu.Lock()
	op.ID = r.nextOp
	r.nextOp++
	r.mu.Unlock()
	op.Invoke = r.Now()
}

// Complete stamps op's completion and appends it to the history.
func (r *Recorder) Complete(op Op) Op {
	op.Complete = r.Now()
	r.mu.Lock()
	r.h.Ops = append(r.h.Ops, op)
	r.mu.Unlock()
	return op
}

// Inject records a fault's injection and returns its id for Heal.
func (r *Recorder) Inject(f Fault) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	f.ID = r.nextFlt
	r.nextFlt++
	f.Inject = r.Now()
	if f.Fired == FiredOnInject {
		f.Fired = f.Inject
	}
	r.h.Faults = append(r.h.Faults, f)
	return f.ID
}

// FireAt records that fault id first struck at at (an offset on this
// clock); a fault keeps its first firing.
func (r *Recorder) FireAt(id int, at time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.h.Faults {
		if r.h.Faults[i].ID == id && r.h.Faults[i].Fired == 0 {
			r.h.Faults[i].Fired = max(at, time.Nanosecond)
		}
	}
}

// Heal records that fault id was removed.
func (r *Recorder) Heal(id int) {
	now := r.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.h.Faults {
		if r.h.Faults[i].ID == id && !r.h.Faults[i].Healed {
			r.h.Faults[i].Heal, r.h.Faults[i].Healed = now, true
		}
	}
}

// Fire records that fault id struck now. Only the first strike is kept:
// Fired says when the fault first did what it was armed to do.
func (r *Recorder) Fire(id int) { r.FireAt(id, r.Now()) }

// GatewayReplay records one answer the gateway gave from its store.
func (r *Recorder) GatewayReplay(g GatewayReplay) {
	r.mu.Lock()
	r.h.GatewayReplays = append(r.h.GatewayReplays, g)
	r.mu.Unlock()
}

// Unstruck records a crash-wave payment whose strike did not happen.
func (r *Recorder) Unstruck(u Unstruck) {
	r.mu.Lock()
	r.h.Unstruck = append(r.h.Unstruck, u)
	r.mu.Unlock()
}

// Charge records one ledger charge.
func (r *Recorder) Charge(c Charge) {
	r.mu.Lock()
	r.h.Charges = append(r.h.Charges, c)
	r.mu.Unlock()
}

// Snapshot returns a copy of the history so far, ops sorted by invocation
// and charges by time. complete marks whether the run finished.
func (r *Recorder) Snapshot(complete bool) *History {
	r.mu.Lock()
	h := r.h
	h.Ops = append([]Op(nil), r.h.Ops...)
	h.Faults = append([]Fault(nil), r.h.Faults...)
	h.Charges = append([]Charge(nil), r.h.Charges...)
	h.GatewayReplays = append([]GatewayReplay(nil), r.h.GatewayReplays...)
	h.Unstruck = append([]Unstruck(nil), r.h.Unstruck...)
	r.mu.Unlock()
	h.End = r.Now()
	h.Complete = complete
	sort.SliceStable(h.Ops, func(i, j int) bool { return h.Ops[i].ID < h.Ops[j].ID })
	sort.SliceStable(h.Charges, func(i, j int) bool { return h.Charges[i].At < h.Charges[j].At })
	return &h
}
