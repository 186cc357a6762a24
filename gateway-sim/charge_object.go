package gatewaysim

import (
	"encoding/json"
	"net/http"
)

// chargeObject is the Stripe charge resource as the simulator renders it:
// the fields a payment service reads, with Stripe's nulls where the
// simulator has nothing to say.
type chargeObject struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	Amount         int64             `json:"amount"`
	AmountCaptured int64             `json:"amount_captured"`
	AmountRefunded int64             `json:"amount_refunded"`
	Captured       bool              `json:"captured"`
	Created        int64             `json:"created"`
	Currency       string            `json:"currency"`
	Customer       *string           `json:"customer"`
	Description    *string           `json:"description"`
	FailureCode    *string           `json:"failure_code"`
	FailureMessage *string           `json:"failure_message"`
	Livemode       bool              `json:"livemode"`
	Metadata       map[string]string `json:"metadata"`
	Paid           bool              `json:"paid"`
	Refunded       bool              `json:"refunded"`
	Status         string            `json:"status"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func renderCharge(c Charge) chargeObject {
	ok := c.Succeeded()
	o := chargeObject{
		ID: c.ID, Object: "charge", Amount: c.Amount, Captured: ok, Created: c.Created.Unix(),
		Currency: c.Currency, Customer: nullable(c.Customer), Description: nullable(c.Description),
		FailureCode: nullable(c.FailureCode), FailureMessage: nullable(c.FailureMessage),
		Metadata: c.Metadata, Paid: ok, Status: c.Status,
	}
	if ok {
		o.AmountCaptured = c.Amount
	}
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
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
	d := &declineReason{code: c.FailureCode, declineCode: c.DeclineCode, message: c.FailureMessage}
	r := errorResponse(d.apiError(c.ID))
	r.chargeID = c.ID
	return r
}

// errorResponse renders a Stripe error object with Stripe's status code.
func errorResponse(e *apiError) *response {
	return jsonResponse(statusOf(e), struct {
		Error *apiError `json:"error"`
	}{e})
}

// searchResult is Stripe's search result object.
type searchResult struct {
	Object   string         `json:"object"`
	Data     []chargeObject `json:"data"`
	HasMore  bool           `json:"has_more"`
	NextPage *string        `json:"next_page"`
	URL      string         `json:"url"`
}
