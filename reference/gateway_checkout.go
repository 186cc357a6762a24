package reference

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// checkoutGateway is Checkout.com's side of a gateway call: POST /payments
// with Cko-Idempotency-Key, the secret key bare in Authorization, the
// order as the payment's reference. Checkout.com keeps a key's result only
// when it was a 2xx: after a 5xx the same key pays again, so a re-send
// first lists the payments of the reference (GET /payments?reference=).
type checkoutGateway struct{}

// checkoutPayment is the part of a Checkout.com payment the reference reads.
type checkoutPayment struct {
	ID        string            `json:"id"`
	Amount    int64             `json:"amount"`
	Currency  string            `json:"currency"`
	Status    string            `json:"status"` // Authorized, Declined, ...
	Approved  bool              `json:"approved"`
	Reference string            `json:"reference"`
	Metadata  map[string]string `json:"metadata"`
}

// charge is the payment as the claim protocol reads a charge: Authorized
// is a succeeded charge, anything else failed.
func (p checkoutPayment) charge() GatewayCharge {
	c := GatewayCharge{ID: p.ID, Object: "payment", Amount: p.Amount, Currency: strings.ToLower(p.Currency),
		Status: "failed", Metadata: p.Metadata}
	if p.Approved && p.Status == "Authorized" {
		c.Status, c.Paid = "succeeded", true
	}
	return c
}

func (checkoutGateway) newRequest(ctx context.Context, g *Gateway, req GatewayRequest) (*http.Request, error) {
	metadata, description := orderFields(g.OrderAt, req.OrderID, req.RequestID)
	if description == "" {
		description = req.Description
	}
	return jsonRequest(ctx, g, "/payments", map[string]any{
		"amount": req.Amount, "currency": strings.ToUpper(req.Currency), "reference": req.OrderID,
		"source":      map[string]string{"type": "token", "token": DefaultSource},
		"description": description, "metadata": metadata,
	}, map[string]string{"Authorization": g.APIKey, "Cko-Idempotency-Key": req.idempotencyKey()})
}

// classify: 201 (or 202, a replay) with the payment, Authorized (charged)
// or Declined; 422 a refused request; 409 or 429 a duplicate in flight,
// 401 our credentials, 5xx an outage: indeterminate.
func (checkoutGateway) classify(status int, body []byte) Outcome {
	o := Outcome{Status: status}
	switch {
	case status >= 200 && status < 300:
		var p checkoutPayment
		if err := json.Unmarshal(body, &p); err != nil || p.ID == "" {
			o.Err = fmt.Errorf("gateway %d: unreadable payment", status)
			return o
		}
		c := p.charge()
		o.Charge = &c
		if c.Status == "succeeded" {
			o.Kind = Charged
		} else {
			o.Kind, o.Error = Declined, &GatewayError{Type: "card_error", Code: "card_declined", Charge: p.ID, Message: p.Status}
		}
	case status == http.StatusUnprocessableEntity, status == http.StatusBadRequest:
		o.Kind = Rejected
	default:
		o.Err = fmt.Errorf("gateway %d", status)
	}
	return o
}

// find lists the payments of the order's reference, newest first, and
// takes the one made under requestID.
func (checkoutGateway) find(ctx context.Context, g *Gateway, orderID, requestID string) (*GatewayCharge, error) {
	var res struct {
		Data []checkoutPayment `json:"data"`
	}
	path := "/payments?" + url.Values{"reference": {orderID}}.Encode()
	if err := g.getJSON(ctx, path, map[string]string{"Authorization": g.APIKey}, &res); err != nil {
		return nil, fmt.Errorf("gateway payment list: %w", err)
	}
	for _, p := range res.Data {
		if p.Metadata["request_id"] == requestID {
			c := p.charge()
			return &c, nil
		}
	}
	return nil, nil
}

func (checkoutGateway) lookFirst() bool { return true }
