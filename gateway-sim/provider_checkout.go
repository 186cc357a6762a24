package gatewaysim

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// The Checkout.com dialect: POST /payments (amount, currency, reference,
// source), GET /payments/{id} and GET /payments?reference=, after
// Checkout.com's API reference ("Request a payment or payout", "Get
// payment details", "Get payment lists") and its "Idempotency" page. A
// payment is answered 201 whether it is Authorized or Declined.

// checkoutProfile: Cko-Idempotency-Key, kept 24 hours, and only a 2xx
// result is kept: "If the original request returns a 4xx or 5xx response
// code, no idempotent result is saved and the payment is reattempted."
// A concurrent duplicate gets 409 (earlier 429); the key is not echoed and
// a replay is not marked.
var checkoutProfile = Profile{
	Name:   ProviderCheckout,
	Source: "Checkout.com API reference: Idempotency; Request a payment or payout (POST /payments); Get payment details; Get payment lists",
	APIs:   []string{"payments"},
	Idempotency: Idempotency{
		Header: "Cko-Idempotency-Key", Lifetime: 24 * time.Hour, KeepsOnlySuccess: true,
		InFlightStatus: http.StatusConflict,
	},
}

type checkoutDialect struct{}

func (checkoutDialect) profile() Profile { return checkoutProfile }

func (checkoutDialect) routes(s *Sim, mux *http.ServeMux) {
	mux.HandleFunc("POST /payments", func(w http.ResponseWriter, r *http.Request) { s.process(w, r, parseCheckoutPayment) })
	mux.HandleFunc("GET /payments/{id}", s.checkoutGet)
	mux.HandleFunc("GET /payments", s.checkoutList)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		s.write(w, nil, &response{status: http.StatusNotFound})
	})
}

// apiKey is the secret key in Authorization, bare (as Checkout.com's
// examples send it) or after Bearer.
func (checkoutDialect) apiKey(r *http.Request) (string, error) {
	v := strings.TrimSpace(r.Header.Get("Authorization"))
	if scheme, cred, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "bearer") {
		v = strings.TrimSpace(cred)
	}
	if v == "" || strings.ContainsAny(v, " \t") {
		return "", &checkoutError{status: http.StatusUnauthorized}
	}
	return v, nil
}

func (checkoutDialect) idempotencyKey(r *http.Request) (string, error) {
	return strings.TrimSpace(r.Header.Get("Cko-Idempotency-Key")), nil
}

// checkoutError is Checkout.com's error answer: a status, and for a 422
// {"request_id", "error_type", "error_codes"}; a 401 has no body.
type checkoutError struct {
	status    int
	RequestID string   `json:"request_id"`
	ErrorType string   `json:"error_type"`
	Codes     []string `json:"error_codes,omitempty"`
}

func (e *checkoutError) Error() string { return e.ErrorType + " " + strings.Join(e.Codes, ",") }

func (e *checkoutError) response() *response {
	if e.status == http.StatusUnauthorized || e.status == http.StatusNotFound {
		return &response{status: e.status}
	}
	return jsonResponse(e.status, e)
}

func checkoutInvalid(codes ...string) *checkoutError {
	return &checkoutError{status: http.StatusUnprocessableEntity, ErrorType: "request_invalid", Codes: codes}
}

// failure renders a Checkout.com error; a body that does not parse (the
// shared reader's Stripe error) is a 422 too.
func (checkoutDialect) failure(err error) *response {
	return failureOf[*checkoutError](err, checkoutInvalid("request_body_malformed").response, checkoutOutage)
}

// keyReused: the documentation describes no check of the parameters; the
// simulator refuses a key reused with other ones (422), as a server must.
func (checkoutDialect) keyReused(string) *response {
	return checkoutInvalid("idempotency_key_reused").response()
}

// keyInUse is the 409 "Conflict with another request being processed".
func (checkoutDialect) keyInUse(string) *response {
	return (&checkoutError{status: http.StatusConflict, ErrorType: "request_conflict"}).response()
}

func (checkoutDialect) outage() *response { return checkoutOutage() }

func checkoutOutage() *response {
	return (&checkoutError{status: http.StatusBadGateway, ErrorType: "processing_error"}).response()
}

func (checkoutDialect) headers(s *Sim, h http.Header, _ string, _ *response) {
	h.Set("Cko-Request-Id", serialID("req_sim", s.reqSeq.Add(1)))
}

func (checkoutDialect) paymentID(rnd *rand.Rand) string { return randomID(rnd, "pay_", 26) }

// parseCheckoutPayment reads POST /payments: amount (minor units),
// currency, reference, source ({"type":"token","token":...}, {"type":
// "card","number":...} or {"type":"id","id":...}), description, metadata.
func parseCheckoutPayment(_ *http.Request, a *attempt, params []param) error {
	req := &chargeRequest{metadata: hashUnder(params, "metadata")}
	amount, present := field(params, "amount")
	n, ok := jsonAmount(amount, present)
	if !ok {
		return checkoutInvalid("amount_invalid")
	}
	req.amount = n
	cur := fieldValue(params, "currency")
	if !isCurrency(cur) {
		return checkoutInvalid("currency_invalid")
	}
	req.currency = strings.ToLower(cur)
	req.reference = fieldValue(params, "reference")
	if len(req.reference) > 80 {
		return checkoutInvalid("reference_invalid")
	}
	req.description = fieldValue(params, "description")
	switch typ := fieldValue(params, "source", "type"); typ {
	case "token":
		req.source = fieldValue(params, "source", "token")
		req.decline = declineOfToken(req.source)
	case "id":
		req.source = fieldValue(params, "source", "id")
	case "card":
		src, d, ok := cardSource(fieldValue(params, "source", "number"))
		if !ok {
			return checkoutInvalid("card_number_invalid")
		}
		req.source, req.decline = src, d
	case "":
		return checkoutInvalid("payment_source_required")
	default:
		return checkoutInvalid("payment_source_type_invalid")
	}
	if req.source == "" {
		return checkoutInvalid("payment_source_required")
	}
	req.fingerprint = fingerprint("POST", "/payments", params)
	a.req, a.op = req, checkoutPayment{}
	return nil
}

// checkoutPayment is POST /payments: a payment, answered 201 with the
// payment, Authorized or Declined.
type checkoutPayment struct{ payment }

func (checkoutPayment) answerLocked(_ *Sim, _ *attempt, c *Charge) *response {
	r := jsonResponse(http.StatusCreated, renderCheckout(*c))
	r.chargeID = c.ID
	return r
}

// checkoutObject is a Checkout.com payment as the answer to POST /payments
// and GET /payments/{id} give it.
type checkoutObject struct {
	ID              string            `json:"id"`
	ActionID        string            `json:"action_id"`
	Amount          int64             `json:"amount"`
	Currency        string            `json:"currency"` // upper case, as Checkout.com answers
	Approved        bool              `json:"approved"`
	Status          string            `json:"status"` // Authorized or Declined
	ResponseCode    string            `json:"response_code"`
	ResponseSummary string            `json:"response_summary"`
	Reference       string            `json:"reference,omitempty"`
	Description     string            `json:"description,omitempty"`
	Metadata        map[string]string `json:"metadata,omitempty"`
	ProcessedOn     string            `json:"processed_on"`
	Links           map[string]link   `json:"_links"`
}

type link struct {
	Href string `json:"href"`
}

func renderCheckout(c Charge) checkoutObject {
	o := checkoutObject{ID: c.ID, ActionID: "act_" + strings.TrimPrefix(c.ID, "pay_"), Amount: c.Amount,
		Currency: strings.ToUpper(c.Currency), Approved: true, Status: "Authorized", ResponseCode: "10000",
		ResponseSummary: "Approved", Reference: c.Reference, Description: c.Description, Metadata: c.Metadata,
		ProcessedOn: c.Created.UTC().Format(time.RFC3339Nano),
		Links:       map[string]link{"self": {Href: "/payments/" + c.ID}}}
	if !c.Succeeded() {
		o.Approved, o.Status, o.ResponseCode, o.ResponseSummary = false, "Declined", "20005", "Declined - Do not honour"
	}
	return o
}

// checkoutGet is GET /payments/{id}: the payment, or 404 for another
// account's or none.
func (s *Sim) checkoutGet(w http.ResponseWriter, r *http.Request) {
	apiKey, err := s.dialect.apiKey(r)
	if err != nil {
		s.write(w, nil, s.dialect.failure(err))
		return
	}
	s.mu.Lock()
	c, ok := s.ledger.get(r.PathValue("id"))
	s.mu.Unlock()
	if !ok || c.APIKey != apiKey {
		s.write(w, nil, &response{status: http.StatusNotFound})
		return
	}
	s.write(w, nil, jsonResponse(http.StatusOK, renderCheckout(c)))
}

// checkoutList is GET /payments?reference=...: the account's payments
// with that reference, newest first; how a server learns an outcome it
// did not hear before it sends the payment again.
func (s *Sim) checkoutList(w http.ResponseWriter, r *http.Request) {
	apiKey, err := s.dialect.apiKey(r)
	if err != nil {
		s.write(w, nil, s.dialect.failure(err))
		return
	}
	ref := r.URL.Query().Get("reference")
	if ref == "" {
		s.write(w, nil, checkoutInvalid("reference_required").response())
		return
	}
	s.mu.Lock()
	var found []checkoutObject
	for i := len(s.ledger.charges) - 1; i >= 0; i-- {
		if c := s.ledger.charges[i]; c.APIKey == apiKey && c.Reference == ref {
			found = append(found, renderCheckout(c))
		}
	}
	s.mu.Unlock()
	s.write(w, nil, jsonResponse(http.StatusOK, map[string]any{
		"limit": len(found), "skip": 0, "total_count": len(found), "data": nonNil(found),
	}))
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
