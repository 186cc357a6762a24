package runner

import (
	"context"
	"fmt"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/scenarios"
)

// strikes is what an execution knows of its crash wave's strikes (steps
// marked scenarios.Step.Strike) that did not happen: which payments'
// strikes were left out and why. Own: only the example's goroutine,
// which plays the steps, touches it.
type strikes struct {
	// unstruck are the payments whose strike could not happen (their
	// first request was answered before the gateway held the charge):
	// their strike's remaining steps are left out, their sends are not.
	unstruck map[string]string
	// dropped are the payments left out whole: their strike would have
	// begun past its Before, so none of their steps or sends is played.
	dropped map[string]string
}

// leftOut says whether step s is left out, and leaves its payment out
// whole when s is the first step of a strike that would begin past its
// Before (the wave's room, measured from the example's first request):
// a strike that began later would push the wave's final retries past
// the first payment's promise.
func (p *execution) leftOut(s scenarios.Step) bool {
	st := &p.strikes
	if s.Strike != "" && s.Before > 0 && st.dropped[s.Strike] == "" {
		if late := time.Since(p.started()); late > s.Before {
			st.leave(&st.dropped, s.Strike, fmt.Sprintf("its strike would have begun %s after the wave's first request, past the %s its room leaves", late.Round(10*time.Millisecond), s.Before.Round(time.Millisecond)))
			p.unstruck(s.Strike, st.dropped[s.Strike])
		}
	}
	if s.Send != nil && st.dropped[s.Send.Order] != "" {
		return true
	}
	switch {
	case s.Strike == "":
		return false
	case st.dropped[s.Strike] != "":
		return true
	case st.unstruck[s.Strike] == "":
		return false
	case s.Send != nil, s.Wait != nil:
		return false
	case s.Heal != "":
		_, active := p.faults[s.Heal]
		return !active
	}
	return true
}

func (st *strikes) leave(m *map[string]string, payment, why string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[payment] = why
}

// holdOrAnswer waits for the gateway to hold w.Hold's committed charge,
// or for the async send w.OrAnswered to answer first: then the server
// answered without charging, nothing is held to strike in, and the
// payment's strike is left out (strikes.unstruck) while the wave goes on.
func (p *execution) holdOrAnswer(ctx context.Context, w scenarios.Wait) error {
	ch, ok := p.pending[w.OrAnswered]
	if !ok {
		return fmt.Errorf("wait gateway-hold %s: no async send %s in flight", w.Hold, w.OrAnswered)
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	held := make(chan error, 1)
	go func() {
		_, err := p.gatewayEvent(hctx, w, gatewaysim.EventHold, p.realOrder(w.Hold))
		held <- err
	}()
	select {
	case err := <-held:
		return err
	case op := <-ch:
		delete(p.pending, w.OrAnswered)
		why := fmt.Sprintf("its first request was answered (%s) before the gateway held a charge for it", describe(op.Status, op.Error))
		p.strikes.leave(&p.strikes.unstruck, w.Hold, why)
		p.unstruck(w.Hold, why)
		return nil
	}
}

// unstruck records that payment's strike did not happen, and why, in the
// history (the report names the point) and the log.
func (p *execution) unstruck(payment, why string) {
	point := ""
	for _, s := range p.sc.Steps {
		if s.Strike == payment && s.Point != "" {
			point = s.Point
			break
		}
	}
	p.rec.Unstruck(history.Unstruck{Point: point, Payment: p.realOrder(payment), Why: why})
	p.r.log().Info("crash wave: strike left out", "family", p.sc.Family, "payment", payment, "point", point, "reason", why)
}

// describe names an answer: its status, or the error that stood for one.
func describe(status int, err string) string {
	if status == 0 {
		return "no answer: " + err
	}
	return fmt.Sprintf("status %d", status)
}

// pastPromise says whether the environment is quiet (every fault healed
// and the recovery window passed) only after a crash wave's final
// retries were due inside the promise (retryBy): a definitive answer
// sent before then stands, for a try sent once quiet would land past the
// promise, in another epoch of its key.
func (p *execution) pastPromise(quiet time.Time) bool {
	return !p.retryBy.IsZero() && quiet.After(p.retryBy)
}
