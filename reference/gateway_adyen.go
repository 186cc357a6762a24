package reference

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// adyenGateway is Adyen's side of a gateway call: the Checkout API's POST
// /v71/payments with Idempotency-Key (at most 64 characters: the
// reference's request ids are 36) and X-API-Key, the order as the
// payment's reference. Adyen keeps the first result of a key for at least
// 31 days and its Checkout API has no lookup of a payment: a re-send under
// the same key is how the outcome is learnt.
type adyenGateway struct{}

// AdyenMerchantAccount is the merchant account the reference's payments
// name (the simulator takes any).
const AdyenMerchantAccount = "IdemcheckReference"

// adyenTestCard is Adyen's always-authorised Visa test card.
const adyenTestCard = "4111111111111111"

func (adyenGateway) newRequest(ctx context.Context, g *Gateway, req GatewayRequest) (*http.Request, error) {
	metadata, statement := orderFields(g.OrderAt, req.OrderID, req.RequestID)
	body := map[string]any{
		"amount":          map[string]any{"value": req.Amount, "currency": strings.ToUpper(req.Currency)},
		"reference":       req.OrderID,
		"merchantAccount": AdyenMerchantAccount,
		"paymentMethod":   map[string]string{"type": "scheme", "number": adyenTestCard, "expiryMonth": "03", "expiryYear": "2030", "cvc": "737"},
		"metadata":        metadata,
	}
	if statement != "" {
		body["shopperStatement"] = statement
	}
	return jsonRequest(ctx, g, "/v71/payments", body, map[string]string{"X-API-Key": g.APIKey, "Idempotency-Key": req.idempotencyKey()})
}

// classify: 200 with resultCode Authorised (charged) or Refused
// (declined); a 422 704 ("request already processed or in progress") or
// any 5xx proves nothing; another 4xx is a refused request.
func (adyenGateway) classify(status int, body []byte) Outcome {
	o := Outcome{Status: status}
	var res struct {
		PSPReference string `json:"pspReference"`
		ResultCode   string `json:"resultCode"`
		Amount       struct {
			Value    int64  `json:"value"`
			Currency string `json:"currency"`
		} `json:"amount"`
		ErrorCode string `json:"errorCode"`
		Message   string `json:"message"`
	}
	parsed := json.Unmarshal(body, &res) == nil
	switch {
	case status == http.StatusOK && parsed && res.PSPReference != "":
		c := GatewayCharge{ID: res.PSPReference, Object: "payment", Amount: res.Amount.Value,
			Currency: strings.ToLower(res.Amount.Currency), Status: "failed"}
		o.Charge = &c
		if res.ResultCode == "Authorised" {
			c.Status, c.Paid, o.Kind = "succeeded", true, Charged
		} else {
			o.Kind, o.Error = Declined, &GatewayError{Type: "card_error", Code: "card_declined", Charge: c.ID, Message: res.ResultCode}
		}
	case status == http.StatusUnprocessableEntity && res.ErrorCode == "704":
		o.Err = fmt.Errorf("gateway %d: %s", status, res.Message)
	case status >= 400 && status < 500 && status != http.StatusUnauthorized && status != http.StatusForbidden:
		o.Kind = Rejected
	default:
		o.Err = fmt.Errorf("gateway %d", status)
	}
	return o
}

func (adyenGateway) find(context.Context, *Gateway, string, string) (*GatewayCharge, error) {
	return nil, errNoLookup
}

func (adyenGateway) lookFirst() bool { return false }
