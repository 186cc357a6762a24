package gatewaysim

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// Hold is a committed charge whose response the gateway is withholding
// (a ChargeThenHang firing). The charge is already in the ledger and
// replayable under its key; only the original caller is still waiting.
type Hold struct {
	ID             string    `json:"id"`
	FaultID        string    `json:"fault_id"`
	ChargeID       string    `json:"charge_id"`
	OrderID        string    `json:"order_id,omitempty"`
	APIKey         string    `json:"api_key"`
	IdempotencyKey string    `json:"idempotency_key,omitempty"`
	Since          time.Time `json:"since"`
}

// hold is a Hold plus the channel its waiting handler blocks on.
type hold struct {
	Hold
	seq      int64 // creation order
	released chan struct{}
}

// holdTable is keyed by hold id. Guarded by Sim.mu. A hold stays in the
// table until released even if its caller went away (was killed in the
// window): the harness releases what it was told about and must not get
// ErrUnknownHold because of a race with the kill.
type holdTable map[string]*hold

// holdLocked withholds a committed charge's response. Callers hold s.mu.
func (s *Sim) holdLocked(f *firing, c Charge) *hold {
	s.holdSeq++
	h := &hold{
		Hold: Hold{
			ID: serialID("hold_", s.holdSeq), FaultID: f.id, ChargeID: c.ID, OrderID: c.OrderID,
			APIKey: c.APIKey, IdempotencyKey: c.IdempotencyKey, Since: s.cfg.Now(),
		},
		seq:      s.holdSeq,
		released: make(chan struct{}),
	}
	s.holds[h.ID] = h
	s.emit(Event{Type: EventHold, Fault: f.kind, FaultID: f.id, HoldID: h.ID, ChargeID: c.ID,
		OrderID: c.OrderID, APIKey: c.APIKey, IdempotencyKey: c.IdempotencyKey, Amount: c.Amount, Currency: c.Currency})
	s.log.Info("holding response", "hold_id", h.ID, "charge_id", c.ID, "order_id", c.OrderID)
	return h
}

// releaseLocked lets a held response go. Callers hold s.mu.
func (s *Sim) releaseLocked(h *hold) {
	delete(s.holds, h.ID)
	close(h.released)
	s.emit(Event{Type: EventRelease, HoldID: h.ID, FaultID: h.FaultID, ChargeID: h.ChargeID, OrderID: h.OrderID,
		APIKey: h.APIKey, IdempotencyKey: h.IdempotencyKey})
}

func (s *Sim) releaseAllLocked() {
	for _, id := range s.holdIDsLocked() {
		s.releaseLocked(s.holds[id])
	}
}

// holdIDsLocked returns hold ids in creation order, so release events come
// out in a reproducible order.
func (s *Sim) holdIDsLocked() []string {
	ids := make([]string, 0, len(s.holds))
	for id := range s.holds {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return s.holds[ids[i]].seq < s.holds[ids[j]].seq })
	return ids
}

// Release sends the response withheld by hold holdID ("" releases every
// hold). The charge was committed long ago; this only lets the original
// caller hear about it, if it is still there.
func (s *Sim) Release(holdID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if holdID == "" {
		s.releaseAllLocked()
		return nil
	}
	h, ok := s.holds[holdID]
	if !ok {
		return fmt.Errorf("release %q: %w", holdID, ErrUnknownHold)
	}
	s.releaseLocked(h)
	return nil
}

// ReleaseAll releases every hold.
func (s *Sim) ReleaseAll() { _ = s.Release("") }

// Holds lists the responses currently withheld, oldest first.
func (s *Sim) Holds() []Hold {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Hold, 0, len(s.holds))
	for _, id := range s.holdIDsLocked() {
		out = append(out, s.holds[id].Hold)
	}
	return out
}

// awaitRelease blocks a handler until its hold is released or its caller
// goes away; it reports whether the response should still be written.
func awaitRelease(ctx context.Context, h *hold) bool {
	select {
	case <-h.released:
		return true
	case <-ctx.Done():
		return false
	}
}
