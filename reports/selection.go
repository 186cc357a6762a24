package reports

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
)

// maxTimelineOps caps the ops one drawing shows: beyond a couple of
// hundred bars a timeline is a texture, not an argument.
const maxTimelineOps = 200

// selection is the part of a history that tells one violation's story:
// the ops of its key and order (and its own ops), the charges of those
// orders, and the faults it names or that overlap it in time. The timeline
// drawing and the history table show the same selection.
type selection struct {
	h        *history.History
	ids      history.ChargeIDs // the ledger charge an answer's id names
	ops      []history.Op      // by invoke time
	charges  []history.Charge
	faults   []history.Fault
	vOps     map[int]bool
	vCharges map[string]bool
	vFaults  map[int]bool
	t0, t1   time.Duration // the drawn time window
	note     string        // what was left out, if anything
}

// selectEvents picks v's story out of h.
func selectEvents(h *history.History, v checker.Violation) *selection {
	s := &selection{h: h, ids: history.ChargeIDsOf(h.Charges), vOps: setOf(v.Ops), vCharges: setOf(v.Charges), vFaults: setOf(v.Faults)}
	ops := relatedOps(h, v, s.vOps)
	s.ops, s.note = capOps(ops, s.vOps)
	if n := len(s.ops); n < len(h.Ops) {
		s.note = joinNote(fmt.Sprintf("showing %d of %d ops%s", n, len(h.Ops), subject(v)), s.note)
	}
	s.charges = relatedCharges(h, v, s.ops, s.ids, s.vCharges)
	s.t0, s.t1 = s.window()
	s.faults = relatedFaults(h, s)
	return s
}

// relatedOps returns the ops of v's key or order plus v's own ops, by
// invoke time; every op when v names none of them (an UNKNOWN about the
// whole run).
func relatedOps(h *history.History, v checker.Violation, vOps map[int]bool) []history.Op {
	var ops []history.Op
	for _, o := range h.Ops {
		if vOps[o.ID] || v.Key != "" && o.Key == v.Key || v.Order != "" && o.Order == v.Order {
			ops = append(ops, o)
		}
	}
	if len(ops) == 0 {
		ops = slices.Clone(h.Ops)
	}
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmp.Compare(a.Invoke, b.Invoke) })
	return ops
}

// capOps keeps at most maxTimelineOps ops: every violating op, then those
// nearest in time to the violation.
func capOps(ops []history.Op, vOps map[int]bool) ([]history.Op, string) {
	if len(ops) <= maxTimelineOps {
		return ops, ""
	}
	center := violationCenter(ops, vOps)
	kept := slices.Clone(ops)
	slices.SortStableFunc(kept, func(a, b history.Op) int {
		if c := cmp.Compare(rank(vOps[a.ID]), rank(vOps[b.ID])); c != 0 {
			return c
		}
		return cmp.Compare((a.Invoke - center).Abs(), (b.Invoke - center).Abs())
	})
	kept = kept[:maxTimelineOps]
	slices.SortStableFunc(kept, func(a, b history.Op) int { return cmp.Compare(a.Invoke, b.Invoke) })
	return kept, fmt.Sprintf("capped at the %d ops nearest the violation", maxTimelineOps)
}

// rank sorts violating ops first.
func rank(violating bool) int {
	if violating {
		return 0
	}
	return 1
}

// violationCenter is the mean invoke time of the violating ops (of all
// ops when none violates).
func violationCenter(ops []history.Op, vOps map[int]bool) time.Duration {
	var sum, n time.Duration
	for _, o := range ops {
		if vOps[o.ID] || len(vOps) == 0 {
			sum += o.Invoke
			n++
		}
	}
	if n == 0 {
		return ops[0].Invoke
	}
	return sum / n
}

// relatedCharges returns the ledger charges of the selected orders, the
// charges the selected ops were told about, and v's own charges.
func relatedCharges(h *history.History, v checker.Violation, ops []history.Op, ids history.ChargeIDs, vCharges map[string]bool) []history.Charge {
	orders, named := map[string]bool{}, map[string]bool{}
	if v.Order != "" {
		orders[v.Order] = true
	}
	for _, o := range ops {
		if o.Order != "" {
			orders[o.Order] = true
		}
		if o.ChargeID != "" {
			named[ids.Resolve(o.ChargeID)] = true
		}
	}
	var out []history.Charge
	for _, c := range h.Charges {
		if vCharges[c.ID] || orders[c.Order] || named[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// relatedFaults returns v's faults and every fault active in the window.
func relatedFaults(h *history.History, s *selection) []history.Fault {
	var out []history.Fault
	for _, f := range h.Faults {
		if s.vFaults[f.ID] || f.Inject <= s.t1 && s.faultEnd(f) >= s.t0 {
			out = append(out, f)
		}
	}
	return out
}

// window is the drawn time range: every selected op and charge and every
// violating fault, with a little margin, never before zero.
func (s *selection) window() (time.Duration, time.Duration) {
	var ts []time.Duration
	for _, o := range s.ops {
		ts = append(ts, o.Invoke, max(o.Complete, o.Invoke))
	}
	for _, c := range s.charges {
		ts = append(ts, c.At)
	}
	for _, f := range s.h.Faults {
		if s.vFaults[f.ID] {
			ts = append(ts, f.Inject, s.faultEnd(f))
		}
	}
	if len(ts) == 0 {
		return 0, max(s.h.End, time.Second)
	}
	t0, t1 := slices.Min(ts), slices.Max(ts)
	t1 = max(t1, t0+time.Millisecond)
	pad := (t1 - t0) / 40
	return max(0, t0-pad), t1 + pad
}

// faultEnd is when f stopped: its heal, or the end of recording when it
// never healed.
func (s *selection) faultEnd(f history.Fault) time.Duration {
	end := f.Heal
	if !f.Healed {
		end = s.h.End
	}
	return max(end, f.Inject)
}

// subject says which ops a filtered selection kept.
func subject(v checker.Violation) string {
	var parts []string
	if v.Key != "" {
		parts = append(parts, "key "+v.Key)
	}
	if v.Order != "" {
		parts = append(parts, "order "+v.Order)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func joinNote(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

func setOf[T comparable](xs []T) map[T]bool {
	m := make(map[T]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
