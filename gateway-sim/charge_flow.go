package gatewaysim

import (
	"net/http"
	"time"
)

// attempt is one request that may move money (a Stripe charge, a
// PaymentIntent created or confirmed, a Checkout.com or Adyen payment) on
// its way through the gateway. What it asks in its provider's dialect is
// its operation; the flow below never asks which dialect that is.
type attempt struct {
	apiKey string
	key    string // the idempotency key; "" when absent or ignored
	req    *chargeRequest
	order  string    // the order req pays for, as the trace attributes it
	op     operation // what the request asks, in its dialect
	nth    int64
	entry  *idemEntry // the reservation under key, if any
	plan   plan
}

func (a *attempt) scope() idemScope { return idemScope{apiKey: a.apiKey, key: a.key} }

// parser reads a request's parameters into its attempt (req and op), or
// returns the dialect's error that refuses them.
type parser func(r *http.Request, a *attempt, params []param) error

// process takes a POST that may move money through the gateway. A
// decision takes one critical section when no latency is injected: lookup,
// reservation and commit happen together, so concurrent duplicates either
// find nothing (and one of them charges) or find the committed charge (and
// replay it); none can see the key in flight. Only a latency fault opens a
// window in which the key is in flight and a duplicate gets the
// provider's answer to a concurrent duplicate (Stripe's 409).
func (s *Sim) process(w http.ResponseWriter, r *http.Request, parse parser) {
	a, resp := s.admit(w, r, parse)
	if resp == nil {
		resp = s.decide(a)
	}
	if resp == nil {
		s.pause(a)
		resp = s.settle(a)
	}
	s.deliver(w, r, a, resp)
}

// admit counts the request, authenticates it and validates its parameters;
// a non-nil response ends the request there (nothing stored, nothing
// charged: no provider saves a result for requests that fail validation).
func (s *Sim) admit(w http.ResponseWriter, r *http.Request, parse parser) (*attempt, *response) {
	a := &attempt{nth: s.countRequest()}
	var err error
	if a.apiKey, err = s.dialect.apiKey(r); err != nil {
		return a, s.dialect.failure(err)
	}
	if a.key, err = s.dialect.idempotencyKey(r); err != nil {
		return a, s.dialect.failure(err)
	}
	params, err := readParams(w, r)
	if err == nil {
		err = parse(r, a, params)
	}
	if err != nil {
		return a, s.dialect.failure(err)
	}
	if !s.idempotent() {
		a.key = ""
	}
	a.order = s.tracer.orderOf(a.req)
	return a, nil
}

func (s *Sim) countRequest() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	return s.requests
}

// decide consults the idempotency store and the faults. It returns the
// response when the request is settled at once (replay, conflict, mismatch,
// or a decision without latency) and nil when the request must first wait
// out a latency fault with its key in flight.
func (s *Sim) decide(a *attempt) *response {
	s.mu.Lock()
	defer s.mu.Unlock()
	if resp := s.lookupLocked(a); resp != nil {
		return resp
	}
	if resp := a.op.checkLocked(s, a); resp != nil {
		return resp
	}
	if a.op.movesMoney() {
		a.plan = s.faults.plan(a.order, a.nth, s.faultRand)
	}
	if a.key != "" {
		a.entry = s.idem.reserve(a.scope(), a.req.fingerprint, a.order, s.cfg.Now())
	}
	if a.plan.wait() > 0 {
		a.op.busyLocked()
		s.emitLatencyLocked(a)
		return nil
	}
	return s.settleLocked(a)
}

// lookupLocked answers a request whose key the store already knows.
func (s *Sim) lookupLocked(a *attempt) *response {
	if a.key == "" {
		return nil
	}
	outcome, e := s.idem.lookup(a.scope(), a.req.fingerprint, s.cfg.Now())
	switch outcome {
	case idemMismatch:
		return s.dialect.keyReused(a.key)
	case idemInFlight:
		return s.dialect.keyInUse(a.key)
	case idemReplay:
		if e.resp.chargeID != "" { // a replayed PaymentIntent creation names no money
			s.emit(Event{Type: EventReplay, ChargeID: e.resp.chargeID, OrderID: a.order, APIKey: a.apiKey,
				IdempotencyKey: a.key, Amount: a.req.amount, Currency: a.req.currency})
		}
		return &response{status: e.resp.status, body: e.resp.body, chargeID: e.resp.chargeID, replayed: true}
	}
	return nil
}

func (s *Sim) emitLatencyLocked(a *attempt) {
	if d := a.plan.delay; d != nil {
		s.emit(a.event(EventFault, d))
	}
}

// pause waits out injected latency. The gateway keeps working when the
// caller gives up: a charge whose caller timed out is still made, which is
// precisely the case idempotency keys exist for.
func (s *Sim) pause(a *attempt) {
	t := time.NewTimer(a.plan.wait())
	defer t.Stop()
	<-t.C
}

func (s *Sim) settle(a *attempt) *response {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settleLocked(a)
}

// settleLocked makes the gateway's decision: an outage before charging, or
// a committed charge or decline.
func (s *Sim) settleLocked(a *attempt) *response {
	a.op.idleLocked()
	if a.plan.kind() == FailBeforeCharge {
		if a.entry != nil {
			s.idem.abort(a.scope(), a.entry)
		}
		s.emit(a.event(EventFault, a.plan.outcome))
		return s.dialect.outage()
	}
	return s.commitLocked(a)
}

// commitLocked writes the ledger entry, stores the response under the key
// and emits the events, all before any post-commit fault touches the
// response: from here on the money has moved.
func (s *Sim) commitLocked(a *attempt) *response {
	if !a.op.movesMoney() {
		return s.storeLocked(a, a.op.answerLocked(s, a, nil))
	}
	c := s.newChargeLocked(a)
	resp := a.op.answerLocked(s, a, &c)
	s.ledger.append(c, s.events.retention())
	s.storeLocked(a, resp)
	s.emitCommitLocked(a, c)
	if a.plan.kind() == ChargeThenHang {
		resp = &response{status: resp.status, body: resp.body, chargeID: resp.chargeID, hold: s.holdLocked(a.plan.outcome, c)}
	}
	s.log.Debug("charge", "id", c.ID, "status", c.Status, "order_id", c.OrderID, "amount", c.Amount, "key", a.key)
	return resp
}

// storeLocked stores the decision under the request's key, if it has one
// and the provider keeps it; a decision the provider does not keep (a
// Checkout.com payment answered 5xx) frees the key, and the same key
// attempts the payment again.
func (s *Sim) storeLocked(a *attempt, resp *response) *response {
	switch {
	case a.entry == nil:
	case s.profile.Idempotency.keeps(resp, a.plan.kind()):
		s.idem.complete(a.entry, resp)
	default:
		s.idem.abort(a.scope(), a.entry)
	}
	return resp
}

func (s *Sim) newChargeLocked(a *attempt) Charge {
	c := Charge{
		ID: s.dialect.paymentID(s.idRand), APIKey: a.apiKey, IdempotencyKey: a.key, OrderID: a.order,
		Amount: a.req.amount, Currency: a.req.currency, Status: StatusSucceeded, Created: s.cfg.Now(),
		Description: a.req.description, Customer: a.req.customer, Source: a.req.source, Metadata: a.req.metadata,
		Reference: a.req.reference,
	}
	d := a.req.decline
	if a.plan.kind() == Decline {
		d = genericDecline
	}
	if d != nil {
		c.Status, c.FailureCode, c.FailureMessage, c.DeclineCode = StatusFailed, d.code, d.message, d.declineCode
	}
	return c
}

// emitCommitLocked emits, in order: the decline fault (the cause), the
// charge or decline (the money), a post-commit fault (the lost answer).
func (s *Sim) emitCommitLocked(a *attempt, c Charge) {
	if a.plan.kind() == Decline {
		s.emit(a.chargeEvent(EventFault, c, a.plan.outcome))
	}
	typ := EventCharge
	if !c.Succeeded() {
		typ = EventDecline
	}
	s.emit(a.chargeEvent(typ, c, nil))
	if a.plan.kind().postCommit() {
		s.emit(a.chargeEvent(EventFault, c, a.plan.outcome))
	}
}

// deliver sends the response, or fails to, as the post-commit fault says.
func (s *Sim) deliver(w http.ResponseWriter, r *http.Request, a *attempt, resp *response) {
	switch {
	case a.plan.kind() == ChargeThenFail:
		resp = s.dialect.outage()
	case a.plan.kind() == ChargeThenDrop:
		dropConnection(w)
		return
	case resp.hold != nil:
		if !awaitRelease(r.Context(), resp.hold) {
			s.log.Info("held caller went away", "hold_id", resp.hold.ID)
			return
		}
	}
	s.write(w, a, resp)
}

// dropConnection closes the connection without a response, as a gateway
// that crashed after committing would.
func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // the server closes the stream
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

func (a *attempt) event(typ string, f *firing) Event {
	ev := Event{Type: typ, APIKey: a.apiKey, IdempotencyKey: a.key}
	if a.req != nil {
		ev.OrderID, ev.Amount, ev.Currency = a.order, a.req.amount, a.req.currency
	}
	if f != nil {
		ev.Fault, ev.FaultID = f.kind, f.id
	}
	return ev
}

func (a *attempt) chargeEvent(typ string, c Charge, f *firing) Event {
	ev := a.event(typ, f)
	ev.ChargeID, ev.PaymentIntent = c.ID, c.PaymentIntent
	return ev
}
