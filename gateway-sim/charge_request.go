package gatewaysim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// chargeRequest is a validated POST /v1/charges.
type chargeRequest struct {
	amount      int64
	currency    string // lower case
	source      string // token or "card_<last4>" for raw card numbers
	customer    string
	description string
	reference   string // the merchant reference (Checkout.com, Adyen); "" for Stripe
	metadata    map[string]string
	decline     *declineReason // the test card or token asks for a decline
	fingerprint string
}

// paramShape is how a top-level charge parameter may be written.
type paramShape int

const (
	scalar paramShape = 1 << iota // amount=1
	hash                          // metadata[k]=v
	list                          // expand[]=x, expand[0]=x
)

// chargeParams is the create-charge parameter set of Stripe's API (the
// form tags of stripe-go's ChargeCreateParams). Parameters outside it are
// refused as Stripe refuses them; the ones the simulator does not model are
// accepted, take part in idempotency, and are otherwise ignored.
var chargeParams = map[string]paramShape{
	"amount": scalar, "currency": scalar, "customer": scalar, "description": scalar,
	"source": scalar | hash, "metadata": hash, "capture": scalar, "receipt_email": scalar,
	"statement_descriptor": scalar, "statement_descriptor_suffix": scalar, "on_behalf_of": scalar,
	"transfer_group": scalar, "application_fee": scalar, "application_fee_amount": scalar,
	"exchange_rate": scalar, "expand": list, "shipping": hash, "transfer_data": hash,
	"radar_options": hash, "level3": hash, "destination": scalar | hash,
}

// Stripe's limits that the simulator enforces.
const (
	maxAmount        = 99999999 // amount_too_large above this
	maxMetadataKeys  = 50
	maxMetadataKey   = 40
	maxMetadataValue = 500
)

// parseChargeRequest validates params into a charge request or returns the
// 400 that names the first bad parameter.
func parseChargeRequest(params []param) (*chargeRequest, error) {
	return parsePayment(params, chargeParams, "/v1/charges", readSource)
}

// parsePayment validates the parameters every request that creates a
// payment shares (amount, currency, metadata, customer, description; the
// parameter set known), reads who pays with readPayer, and fingerprints
// the request under route.
func parsePayment(params []param, known map[string]paramShape, route string, readPayer func([]param, *chargeRequest) error) (*chargeRequest, error) {
	if err := checkShapes(params, known); err != nil {
		return nil, err
	}
	req := &chargeRequest{metadata: map[string]string{}}
	for _, step := range []func([]param, *chargeRequest) error{readAmount, readCurrency, readMetadata, readPayer} {
		if err := step(params, req); err != nil {
			return nil, err
		}
	}
	req.customer = scalarValue(params, "customer")
	req.description = scalarValue(params, "description")
	req.fingerprint = fingerprint("POST", route, normalisedAmount(params, req.amount))
	return req, nil
}

// checkShapes refuses unknown parameters, wrong nesting and repeated scalars.
func checkShapes(params []param, known map[string]paramShape) error {
	seen := map[string]bool{}
	for _, p := range params {
		shape, ok := known[p.path[0]]
		switch {
		case !ok:
			return invalidParam(p.path[0], "parameter_unknown", "Received unknown parameter: "+p.path[0])
		case len(p.path) == 1 && shape&scalar == 0 && !(shape&hash != 0 && p.value == ""):
			return invalidParam(p.path[0], "parameter_invalid_string", "Invalid "+p.path[0]+": must be an object.")
		case len(p.path) > 1 && shape&(hash|list) == 0:
			return invalidParam(p.name(), "parameter_unknown", "Received unknown parameter: "+p.name())
		case seen[p.name()] && shape&list == 0:
			return invalidParam(p.name(), "parameter_duplicate", "Received duplicate parameter: "+p.name())
		}
		seen[p.name()] = true
	}
	return nil
}

// find returns the one top-level scalar named name.
func find(params []param, name string) (param, bool) {
	for _, p := range params {
		if len(p.path) == 1 && p.path[0] == name {
			return p, true
		}
	}
	return param{}, false
}

func scalarValue(params []param, name string) string {
	p, _ := find(params, name)
	return p.value
}

func readAmount(params []param, req *chargeRequest) error {
	p, ok := find(params, "amount")
	if !ok || p.value == "" {
		return invalidParam("amount", "parameter_missing", "Missing required param: amount.")
	}
	n, ok := parseInteger(p)
	switch {
	case !ok:
		return invalidParam("amount", "parameter_invalid_integer", "Invalid integer: "+p.value)
	case n <= 0:
		return invalidParam("amount", "parameter_invalid_integer", "Invalid positive integer: amount must be at least 1.")
	case n > maxAmount:
		return invalidParam("amount", "amount_too_large", fmt.Sprintf("Amount must be no more than %d.", maxAmount))
	}
	req.amount = n
	return nil
}

// parseInteger accepts decimal integers, and for JSON numbers also any
// integral spelling (1250.0, 1.25e3): JSON equality is numeric.
func parseInteger(p param) (int64, bool) {
	if n, err := strconv.ParseInt(p.value, 10, 64); err == nil {
		return n, true
	}
	if !p.number {
		return 0, false
	}
	f, err := strconv.ParseFloat(p.value, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// normalisedAmount rewrites amount to its canonical decimal form so that
// 1250 and 1.25e3 fingerprint alike.
func normalisedAmount(params []param, amount int64) []param {
	out := make([]param, len(params))
	for i, p := range params {
		if len(p.path) == 1 && p.path[0] == "amount" {
			p = param{path: p.path, value: strconv.FormatInt(amount, 10)}
		}
		out[i] = p
	}
	return out
}

func readCurrency(params []param, req *chargeRequest) error {
	p, ok := find(params, "currency")
	if !ok || p.value == "" {
		return invalidParam("currency", "parameter_missing", "Missing required param: currency.")
	}
	if !isCurrency(p.value) {
		return invalidParam("currency", "parameter_invalid_string", "Invalid currency: "+p.value+". Currencies are three-letter ISO codes, e.g. usd.")
	}
	req.currency = strings.ToLower(p.value)
	return nil
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') {
			return false
		}
	}
	return true
}

func readMetadata(params []param, req *chargeRequest) error {
	for _, p := range params {
		if p.path[0] != "metadata" || len(p.path) == 1 {
			continue
		}
		if err := checkMetadata(p); err != nil {
			return err
		}
		req.metadata[p.path[1]] = p.value
	}
	if len(req.metadata) > maxMetadataKeys {
		return invalidParam("metadata", "parameter_invalid_string", fmt.Sprintf("Invalid metadata: at most %d keys.", maxMetadataKeys))
	}
	return nil
}

func checkMetadata(p param) error {
	switch {
	case len(p.path) != 2:
		return invalidParam(p.name(), "parameter_invalid_string", "Invalid metadata: values must be strings.")
	case p.path[1] == "" || len(p.path[1]) > maxMetadataKey:
		return invalidParam(p.name(), "parameter_invalid_string", fmt.Sprintf("Invalid metadata key: keys are 1 to %d characters.", maxMetadataKey))
	case len(p.value) > maxMetadataValue:
		return invalidParam(p.name(), "parameter_invalid_string", fmt.Sprintf("Invalid metadata value: values are at most %d characters.", maxMetadataValue))
	}
	return nil
}

// readSource takes a token or id (source=tok_visa) or a raw card
// (source[number]=4242...), and notes when it is one of Stripe's declining
// test cards.
func readSource(params []param, req *chargeRequest) error {
	if p, ok := find(params, "source"); ok {
		req.source = p.value
		req.decline = declineOfToken(p.value)
		return nil
	}
	for _, p := range params {
		if p.path[0] == "source" && len(p.path) == 2 && p.path[1] == "number" {
			return readCardNumber(p, req)
		}
	}
	return nil
}

func readCardNumber(p param, req *chargeRequest) error {
	digits := strings.ReplaceAll(p.value, " ", "")
	if len(digits) < 12 || len(digits) > 19 || strings.Trim(digits, "0123456789") != "" {
		return &apiError{kind: errDeclined, Type: typeCard, Code: "invalid_number", Param: "number",
			Message: "The card number is not a valid credit card number."}
	}
	req.source = "card_" + digits[len(digits)-4:]
	req.decline = declineCards[digits]
	return nil
}
