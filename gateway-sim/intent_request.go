package gatewaysim

import (
	"maps"
	"net/http"
)

// intentConfirmParams is the parameter set of
// POST /v1/payment_intents/{id}/confirm (the form tags of stripe-go's
// PaymentIntentConfirmParams, and client_secret, which its older
// PaymentIntentParams may carry). As for charges, parameters the
// simulator does not model are accepted, take part in idempotency, and are
// otherwise ignored.
var intentConfirmParams = map[string]paramShape{
	"capture_method": scalar, "client_secret": scalar, "confirmation_token": scalar,
	"error_on_requires_action": scalar, "expand": list, "mandate": scalar, "mandate_data": hash,
	"off_session": scalar, "payment_method": scalar, "payment_method_data": hash,
	"payment_method_options": hash, "payment_method_types": list, "radar_options": hash,
	"receipt_email": scalar, "return_url": scalar, "setup_future_usage": scalar, "shipping": hash,
	"use_stripe_sdk": scalar,
}

// intentCreateParams is the parameter set of POST /v1/payment_intents
// (stripe-go's PaymentIntentCreateParams): the confirm set and the
// payment's own.
var intentCreateParams = withParams(intentConfirmParams, map[string]paramShape{
	"amount": scalar, "currency": scalar, "customer": scalar, "description": scalar, "metadata": hash,
	"confirm": scalar, "confirmation_method": scalar, "application_fee_amount": scalar,
	"automatic_payment_methods": hash, "excluded_payment_method_types": list, "on_behalf_of": scalar,
	"payment_method_configuration": scalar, "statement_descriptor": scalar,
	"statement_descriptor_suffix": scalar, "transfer_data": hash, "transfer_group": scalar,
})

func withParams(base, more map[string]paramShape) map[string]paramShape {
	out := maps.Clone(base)
	maps.Copy(out, more)
	return out
}

// parseIntentCreate reads POST /v1/payment_intents. With confirm=true the
// request moves money and needs a payment method.
func parseIntentCreate(_ *http.Request, a *attempt, params []param) error {
	req, err := parsePayment(params, intentCreateParams, "/v1/payment_intents", readPaymentMethod)
	if err != nil {
		return err
	}
	op := &intentOp{methodTypes: listValues(params, "payment_method_types")}
	if len(op.methodTypes) == 0 {
		op.methodTypes = []string{"card"}
	}
	if op.confirm, err = readBool(params, "confirm"); err != nil {
		return err
	}
	if err := checkCaptureMethod(params); err != nil {
		return err
	}
	if op.confirm && req.source == "" {
		return missingPaymentMethod()
	}
	a.req, a.op = req, op
	return nil
}

// parseIntentConfirm reads POST /v1/payment_intents/{id}/confirm: the
// payment is the PaymentIntent's, fingerprinted with its id, so one key
// cannot confirm two PaymentIntents.
func (s *Sim) parseIntentConfirm(r *http.Request, a *attempt, params []param) error {
	if err := checkShapes(params, intentConfirmParams); err != nil {
		return err
	}
	if err := checkCaptureMethod(params); err != nil {
		return err
	}
	id := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	pi, ok := s.intents.get(a.apiKey, id)
	if !ok {
		return noSuchIntent(id)
	}
	a.req = pi.payment(fingerprint("POST", "/v1/payment_intents/"+id+"/confirm", params))
	a.op = &intentOp{id: id, confirm: true, paymentMethod: scalarValue(params, "payment_method"), pi: pi}
	return nil
}

// readPaymentMethod takes payment_method (pm_card_visa, ...) as the
// payment's source and notes when it is one of Stripe's declining test
// PaymentMethods.
func readPaymentMethod(params []param, req *chargeRequest) error {
	req.source = scalarValue(params, "payment_method")
	req.decline = declineOfToken(req.source)
	return nil
}

// readBool reads a boolean parameter as Stripe spells it; absent is false.
func readBool(params []param, name string) (bool, error) {
	switch v := scalarValue(params, name); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, invalidParam(name, "parameter_invalid_boolean", "Invalid boolean: "+v)
	}
}

// checkCaptureMethod refuses manual capture: the simulator's money moves
// on confirmation, and accepting capture_method=manual while charging at
// once would misreport when money moved.
func checkCaptureMethod(params []param) error {
	switch v := scalarValue(params, "capture_method"); v {
	case "", "automatic", "automatic_async":
		return nil
	default:
		return invalidParam("capture_method", "parameter_invalid_string",
			"Invalid capture_method: "+v+". The simulator captures on confirmation (automatic or automatic_async).")
	}
}

// listValues returns the values of a list parameter (name[]=a, name[0]=a),
// in request order.
func listValues(params []param, name string) []string {
	var out []string
	for _, p := range params {
		if p.path[0] == name && len(p.path) == 2 {
			out = append(out, p.value)
		}
	}
	return out
}
