package gatewaysim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

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
// taken (an in-process simulator, Local, or a gateway-sim process over
// its control API).
type Forgetter interface {
	ForgetAfter(d time.Duration)
}

func (l local) ForgetAfter(d time.Duration) { l.s.ForgetAfter(d) }

// ErrInvalidForget is a Forget with a negative retention.
var ErrInvalidForget = errors.New("gatewaysim: invalid forget")

// Forget is ForgetAfter over the control API (POST /_sim/forget).
type Forget struct {
	// AfterMillis is the retention in milliseconds; 0 keeps everything.
	AfterMillis int64 `json:"after_ms"`
}

// applyForget applies f, refusing a negative retention.
func (s *Sim) applyForget(f Forget) error {
	if f.AfterMillis < 0 {
		return fmt.Errorf("%w: want after_ms >= 0 (0: keep everything), got %d", ErrInvalidForget, f.AfterMillis)
	}
	s.ForgetAfter(time.Duration(f.AfterMillis) * time.Millisecond)
	return nil
}

// simForget is POST /_sim/forget with a Forget as its JSON body.
func (s *Sim) simForget(w http.ResponseWriter, r *http.Request) {
	simApply(w, r, ErrInvalidForget, s.applyForget)
}

// ForgetAfter calls POST /_sim/forget: the gateway forgets charges and
// events d after they happened (Sim.ForgetAfter), to the millisecond.
func (c *Client) ForgetAfter(ctx context.Context, d time.Duration) error {
	return c.do(ctx, http.MethodPost, "/_sim/forget", Forget{AfterMillis: d.Milliseconds()}, nil)
}
