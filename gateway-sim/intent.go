package gatewaysim

import (
	"maps"
	"net/http"
	"slices"
	"time"
)

// PaymentIntent statuses the simulator models. A PaymentIntent moves money
// when it is confirmed with a payment method: it then succeeds (one ledger
// charge, its latest_charge) or is declined (a failed ledger charge, and
// it asks for another payment method). Manual capture, next actions and
// cancellation are not modelled.
const (
	intentRequiresPaymentMethod = "requires_payment_method"
	intentRequiresConfirmation  = "requires_confirmation"
	intentSucceeded             = "succeeded"
)

// paymentIntent is one PaymentIntent. Amount, currency, customer,
// description and metadata never change after creation (the simulator has
// no update endpoint). Guarded by Sim.mu.
type paymentIntent struct {
	id, apiKey    string
	amount        int64
	currency      string
	customer      string
	description   string
	metadata      map[string]string
	methodTypes   []string
	paymentMethod string // "" once a decline detached it, as at Stripe
	status        string
	latestCharge  string
	lastError     *apiError // the last decline, until a confirm succeeds
	created       time.Time
	// busy is set while a confirm of this PaymentIntent waits out a latency
	// fault: another confirm meanwhile gets 429 lock_timeout, so one
	// PaymentIntent never charges twice.
	busy bool
}

// intentOp is what a PaymentIntent request asks beyond its payment.
type intentOp struct {
	id            string   // confirm: the PaymentIntent's id; "" when the request creates one
	confirm       bool     // the request moves money
	paymentMethod string   // confirm: its payment_method, "" to use the PaymentIntent's
	methodTypes   []string // create: payment_method_types
	pi            *paymentIntent
	locked        bool // this request set pi.busy
}

// movesMoney: a create with confirm=true, or a confirm.
func (op *intentOp) movesMoney() bool { return op.confirm }

// busyLocked marks the PaymentIntent being confirmed as busy while the
// request waits out a latency fault; a no-op for a create.
func (op *intentOp) busyLocked() {
	if op.pi != nil {
		op.pi.busy, op.locked = true, true
	}
}

// idleLocked ends busyLocked once the gateway decides.
func (op *intentOp) idleLocked() {
	if op.locked {
		op.pi.busy, op.locked = false, false
	}
}

// answerLocked renders a create without confirm=true (c is nil: a
// PaymentIntent that moved no money), or the PaymentIntent a
// money-moving request confirms, created now for a create with
// confirm=true: the ledger charge c records it.
func (op *intentOp) answerLocked(s *Sim, a *attempt, c *Charge) *response {
	if c == nil {
		return jsonResponse(http.StatusOK, s.newIntentLocked(a).render())
	}
	if op.pi == nil {
		op.pi = s.newIntentLocked(a)
	}
	c.PaymentIntent = op.pi.id
	return op.pi.confirmed(*c)
}

// intentTable holds the PaymentIntents since the last reset, in creation
// order for search. Guarded by Sim.mu.
type intentTable struct {
	list []*paymentIntent
	byID map[string]*paymentIntent
}

func newIntentTable() intentTable { return intentTable{byID: map[string]*paymentIntent{}} }

func (t *intentTable) add(pi *paymentIntent) {
	t.list = append(t.list, pi)
	t.byID[pi.id] = pi
}

// get finds an API key's own PaymentIntent: another key's is as unknown
// as another Stripe account's.
func (t *intentTable) get(apiKey, id string) (*paymentIntent, bool) {
	pi, ok := t.byID[id]
	return pi, ok && pi.apiKey == apiKey
}

// payment is the charge request a confirm of pi makes, fingerprinted as fp;
// its payment method is chosen when the confirm is decided.
func (pi *paymentIntent) payment(fp string) *chargeRequest {
	return &chargeRequest{amount: pi.amount, currency: pi.currency, customer: pi.customer,
		description: pi.description, metadata: maps.Clone(pi.metadata), fingerprint: fp}
}

// newIntentLocked stores the PaymentIntent a create asks for.
func (s *Sim) newIntentLocked(a *attempt) *paymentIntent {
	pi := &paymentIntent{
		id: randomID(s.idRand, "pi_", 24), apiKey: a.apiKey, amount: a.req.amount, currency: a.req.currency,
		customer: a.req.customer, description: a.req.description, metadata: a.req.metadata,
		methodTypes: a.op.(*intentOp).methodTypes, paymentMethod: a.req.source, status: intentRequiresPaymentMethod,
		created: s.cfg.Now(),
	}
	if pi.paymentMethod != "" {
		pi.status = intentRequiresConfirmation
	}
	s.intents.add(pi)
	return pi
}

// checkLocked decides whether a confirm may go ahead. It runs after
// the idempotency lookup, so a re-sent confirm replays its answer whatever
// the PaymentIntent's state is now. The PaymentIntent must not be in
// another confirm's hands (429), must not have succeeded (400), and must
// have a payment method; the charge uses the confirm's, else the one the
// PaymentIntent holds.
func (op *intentOp) checkLocked(_ *Sim, a *attempt) *response {
	if op.pi == nil {
		return nil
	}
	switch pi := op.pi; {
	case pi.busy:
		return errorResponse(locked())
	case pi.status == intentSucceeded:
		return errorResponse(pi.unexpectedState())
	}
	pm := op.paymentMethod
	if pm == "" {
		pm = op.pi.paymentMethod
	}
	if pm == "" {
		return errorResponse(missingPaymentMethod())
	}
	a.req.source, a.req.decline = pm, declineOfToken(pm)
	return nil
}

// confirmed records the charge a confirmation made on the PaymentIntent
// and renders the answer: the succeeded PaymentIntent, or the decline
// with the PaymentIntent embedded, as Stripe answers both.
func (pi *paymentIntent) confirmed(c Charge) *response {
	pi.latestCharge = c.ID
	var r *response
	if c.Succeeded() {
		pi.status, pi.paymentMethod, pi.lastError = intentSucceeded, c.Source, nil
		r = jsonResponse(http.StatusOK, pi.render())
	} else {
		pi.status, pi.paymentMethod = intentRequiresPaymentMethod, ""
		pi.lastError = declineOfCharge(c).apiError(c.ID)
		r = errorResponse(pi.failure(pi.lastError))
	}
	r.chargeID = c.ID
	return r
}

// failure is e with the PaymentIntent embedded in its current state.
func (pi *paymentIntent) failure(e *apiError) *apiError {
	out := *e
	o := pi.render()
	out.PaymentIntent = &o
	return &out
}

func (pi *paymentIntent) unexpectedState() *apiError {
	return pi.failure(&apiError{kind: errInvalidParam, Type: typeInvalidRequest, Code: "payment_intent_unexpected_state",
		Message: "You cannot confirm this PaymentIntent because it has already succeeded after being previously confirmed."})
}

func missingPaymentMethod() *apiError {
	return invalidParam("payment_method", "parameter_missing",
		"You cannot confirm this PaymentIntent because it's missing a payment method. Specify a payment_method (e.g. pm_card_visa).")
}

func noSuchIntent(id string) *apiError {
	return notFound("resource_missing", "intent", "No such payment_intent: '"+id+"'")
}

// intentObject is the Stripe PaymentIntent resource as the simulator
// renders it; expandable fields (customer, payment_method, latest_charge)
// are ids, as Stripe sends them unexpanded.
type intentObject struct {
	paymentObject
	AmountReceived   int64 `json:"amount_received"`
	AmountCapturable int64 `json:"amount_capturable"` // always 0: no manual capture

	CaptureMethod      string `json:"capture_method"`
	ConfirmationMethod string `json:"confirmation_method"`
	ClientSecret       string `json:"client_secret"`

	PaymentMethod      *string  `json:"payment_method"`
	PaymentMethodTypes []string `json:"payment_method_types"`

	LatestCharge     *string   `json:"latest_charge"`      // the ledger charge of the last confirmation
	LastPaymentError *apiError `json:"last_payment_error"` // the last decline, until a confirmation succeeds
}

func (pi *paymentIntent) render() intentObject {
	o := intentObject{paymentObject: pi.facts().object("payment_intent"), CaptureMethod: "automatic",
		ClientSecret: pi.id + "_secret_sim", ConfirmationMethod: "automatic", LastPaymentError: pi.lastError,
		LatestCharge: nullable(pi.latestCharge), PaymentMethod: nullable(pi.paymentMethod),
		PaymentMethodTypes: slices.Clone(pi.methodTypes)}
	if pi.status == intentSucceeded {
		o.AmountReceived = pi.amount
	}
	return o
}

// facts are what a PaymentIntent states about its payment.
func (pi *paymentIntent) facts() facts {
	return facts{id: pi.id, apiKey: pi.apiKey, status: pi.status, currency: pi.currency, customer: pi.customer,
		description: pi.description, amount: pi.amount, metadata: pi.metadata, created: pi.created}
}
