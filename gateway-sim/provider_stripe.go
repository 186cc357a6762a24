package gatewaysim

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// The Stripe dialect: /v1/charges and PaymentIntents. Its parameters are
// in charge_request.go and intent_request.go, its objects in
// charge_object.go and intent.go, its GETs and search in stripe_api.go and
// search.go; this file is its seam: profile, routes, keys, errors,
// headers, and the operations its money-moving requests are.

// maxIdempotencyKey is Stripe's limit on Idempotency-Key.
const maxIdempotencyKey = 255

// stripeProfile is Stripe as its documentation gives it ("Idempotent
// requests", Stripe API reference): a key is kept 24 hours and replays
// the first result once execution started, errors included; a concurrent
// duplicate gets 409; answers echo the key and mark a replay.
var stripeProfile = Profile{
	Name:   ProviderStripe,
	Source: "Stripe API reference: Idempotent requests; Charges; PaymentIntents",
	APIs:   []string{"charges", "payment_intents"},
	Idempotency: Idempotency{
		Header: "Idempotency-Key", MaxKey: maxIdempotencyKey, Lifetime: 24 * time.Hour,
		InFlightStatus: http.StatusConflict, EchoesKey: true, ReplayHeader: "Idempotent-Replayed",
	},
}

type stripeDialect struct{}

func (stripeDialect) profile() Profile { return stripeProfile }

// routes wires the Stripe subset (charges and PaymentIntents). Every
// other path (an unknown /v1 path, /_sim/...) gets Stripe's 404 error
// object, "Unrecognized request URL", so a client library reports it
// sensibly.
func (stripeDialect) routes(s *Sim, mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/charges", s.createCharge)
	mux.HandleFunc("GET /v1/charges/search", s.searchCharges)
	mux.HandleFunc("GET /v1/charges/{id}", s.getCharge)
	mux.HandleFunc("POST /v1/payment_intents", s.createIntent)
	mux.HandleFunc("POST /v1/payment_intents/{id}/confirm", s.confirmIntent)
	mux.HandleFunc("GET /v1/payment_intents/search", s.searchIntents)
	mux.HandleFunc("GET /v1/payment_intents/{id}", s.getIntent)
	mux.HandleFunc("/", s.unknownURL)
}

func (stripeDialect) apiKey(r *http.Request) (string, error) { return apiKeyOf(r) }

// idempotencyKey returns the request's Idempotency-Key, trimmed as
// stripe-go trims it; "" when absent. Whether the gateway honours it is
// the profile's (admit).
func (stripeDialect) idempotencyKey(r *http.Request) (string, error) {
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if len(key) > maxIdempotencyKey {
		return "", invalidParam("Idempotency-Key", "idempotency_key_too_long",
			fmt.Sprintf("Keys for idempotent requests can only be %d characters long.", maxIdempotencyKey))
	}
	return key, nil
}

func (stripeDialect) failure(err error) *response     { return errorResponse(asAPIError(err)) }
func (stripeDialect) keyReused(key string) *response  { return errorResponse(keyReused(key)) }
func (stripeDialect) keyInUse(key string) *response   { return errorResponse(keyInUse(key)) }
func (stripeDialect) outage() *response               { return errorResponse(gatewayFailed()) }
func (stripeDialect) paymentID(rnd *rand.Rand) string { return randomID(rnd, "ch_", 24) }
func (stripeDialect) headers(s *Sim, h http.Header, key string, resp *response) {
	stripeHeaders(s, h, key, resp)
}

// stripeHeaders are Stripe's: a Request-Id, Idempotency-Key echoed as
// Stripe does (stripe-go reads it into APIResponse.IdempotencyKey), and on
// a replay Idempotent-Replayed: true.
func stripeHeaders(s *Sim, h http.Header, key string, resp *response) {
	h.Set("Request-Id", serialID("req_sim", s.reqSeq.Add(1)))
	if key != "" {
		h.Set("Idempotency-Key", key)
	}
	if resp.replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	if resp.status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Basic realm="Stripe"`)
	}
}

// chargeOp is POST /v1/charges: a payment, answered with the charge
// object (or the decline's card_error).
type chargeOp struct{ payment }

func (chargeOp) answerLocked(_ *Sim, _ *attempt, c *Charge) *response {
	return chargeResponse(*c)
}

func parseCharge(_ *http.Request, a *attempt, params []param) (err error) {
	a.req, err = parseChargeRequest(params)
	a.op = chargeOp{}
	return err
}

// createCharge is POST /v1/charges.
func (s *Sim) createCharge(w http.ResponseWriter, r *http.Request) { s.process(w, r, parseCharge) }
