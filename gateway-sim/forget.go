package gatewaysim

import "time"

// ForgetAfter makes the simulator forget a charge (GET, search) and an
// event (SubscribeSince's backlog, WaitEvent) d after it happened, as
// newer ones come, until it is closed (a Reset keeps it): a harness that
// soaks for hours in one process, and has taken every event as it came,
// does not keep them all. Zero keeps everything, as a new simulator does.
// Idempotency keys are forgotten on their own clock (Config.IdempotencyTTL)
// whatever d is.
func (s *Sim) ForgetAfter(d time.Duration) {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	s.events.retain = max(d, 0)
}

// Forgetter is a Controller whose gateway can forget what a run has
// taken (an in-process simulator, Local).
type Forgetter interface {
	ForgetAfter(d time.Duration)
}

func (l local) ForgetAfter(d time.Duration) { l.s.ForgetAfter(d) }
