package gatewaysim

import (
	"encoding/json"
	"maps"
	"net/http"
)

// paymentObject holds the fields Stripe's charge and PaymentIntent
// objects share, rendered from the payment's facts; metadata is {} rather
// than null, as Stripe sends it.
type paymentObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "charge" or "payment_intent"
	Created int64  `json:"created"`

	Amount      int64             `json:"amount"`
	Currency    string            `json:"currency"`
	Customer    *string           `json:"customer"`
	Description *string           `json:"description"`
	Metadata    map[string]string `json:"metadata"`

	Livemode bool   `json:"livemode"` // always false: the simulator is test mode
	Status   string `json:"status"`
}

func (f facts) object(kind string) paymentObject {
	o := paymentObject{ID: f.id, Object: kind, Amount: f.amount, Created: f.created.Unix(), Currency: f.currency,
		Customer: nullable(f.customer), Description: nullable(f.description), Metadata: maps.Clone(f.metadata), Status: f.status}
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	return o
}

// chargeObject is the Stripe charge resource as the simulator renders it:
// the fields a payment service reads, with Stripe's nulls where the
// simulator has nothing to say.
type chargeObject struct {
	paymentObject
	Paid           bool  `json:"paid"`
	Captured       bool  `json:"captured"`
	AmountCaptured int64 `json:"amount_captured"`
	AmountRefunded int64 `json:"amount_refunded"`
	Refunded       bool  `json:"refunded"`

	FailureCode    *string `json:"failure_code"`
	FailureMessage *string `json:"failure_message"`

	PaymentIntent *string `json:"payment_intent"` // the PaymentIntent whose confirmation made the charge
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// facts are what a charge states about its payment.
func (c Charge) facts() facts {
	return facts{id: c.ID, apiKey: c.APIKey, status: c.Status, currency: c.Currency, customer: c.Customer,
		description: c.Description, amount: c.Amount, metadata: c.Metadata, created: c.Created}
}

func renderCharge(c Charge) chargeObject {
	ok := c.Succeeded()
	o := chargeObject{paymentObject: c.facts().object("charge"), Captured: ok,
		FailureCode: nullable(c.FailureCode), FailureMessage: nullable(c.FailureMessage),
		Paid: ok, PaymentIntent: nullable(c.PaymentIntent)}
	if ok {
		o.AmountCaptured = c.Amount
	}
	return o
}

// response is an HTTP answer the simulator may have to send again: the
// decision stored under an idempotency key is replayed byte for byte.
type response struct {
	status   int
	body     []byte
	chargeID string // the charge the response is about, if any
	replayed bool   // sent from the idempotency store
	hold     *hold  // withheld until released (ChargeThenHang)
	// header holds headers of this answer alone (Adyen's Transient-Error);
	// never set on an answer the idempotency store keeps.
	header map[string]string
}

func jsonResponse(status int, v any) *response {
	b, err := json.Marshal(v)
	if err != nil { // only simulator-built values are marshalled
		panic("gatewaysim: marshal response: " + err.Error())
	}
	return &response{status: status, body: append(b, '\n')}
}

func chargeResponse(c Charge) *response {
	if c.Succeeded() {
		r := jsonResponse(http.StatusOK, renderCharge(c))
		r.chargeID = c.ID
		return r
	}
	r := errorResponse(declineOfCharge(c).apiError(c.ID))
	r.chargeID = c.ID
	return r
}

// errorResponse renders a Stripe error object with Stripe's status code.
func errorResponse(e *apiError) *response {
	return jsonResponse(statusOf(e), struct {
		Error *apiError `json:"error"`
	}{e})
}

// searchResult is Stripe's search result object; Data holds rendered
// charges or PaymentIntents.
type searchResult struct {
	Object   string  `json:"object"`
	Data     []any   `json:"data"`
	HasMore  bool    `json:"has_more"`
	NextPage *string `json:"next_page"`
	URL      string  `json:"url"`
}
