package gatewaysim

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// The Adyen dialect: the Checkout API's POST /v71/payments (amount
// {value, currency}, reference, paymentMethod, merchantAccount), answered
// 200 with resultCode Authorised or Refused and the pspReference, after
// Adyen's "Checkout API" reference (/payments), "API idempotency" and
// "Response handling" pages. The Checkout API has no GET of a payment: a
// server learns an outcome it did not hear by sending the same request
// with the same key again (kept at least 31 days), or from webhooks.

// adyenMaxKey is Adyen's limit: "a maximum of 64 characters".
const adyenMaxKey = 64

// adyenProfile: Idempotency-Key of at most 64 characters, kept at least 31
// days per company account (here: per API key); the first result is
// returned and the answer echoes the key; a concurrent duplicate gets a
// transient error to retry.
var adyenProfile = Profile{
	Name:   ProviderAdyen,
	Source: "Adyen docs: API idempotency; Checkout API v71 POST /payments; Response handling",
	APIs:   []string{"payments"},
	Idempotency: Idempotency{
		Header: "Idempotency-Key", MaxKey: adyenMaxKey, Lifetime: 31 * 24 * time.Hour,
		InFlightStatus: http.StatusUnprocessableEntity, EchoesKey: true,
	},
}

type adyenDialect struct{}

func (adyenDialect) profile() Profile { return adyenProfile }

func (adyenDialect) routes(s *Sim, mux *http.ServeMux) {
	mux.HandleFunc("POST /v71/payments", func(w http.ResponseWriter, r *http.Request) { s.process(w, r, parseAdyenPayment) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.write(w, nil, adyenFail(http.StatusNotFound, "000", "security", "HTTP Status Response - Not Found: "+r.URL.Path).response())
	})
}

// apiKey is X-API-Key, or a web service user's basic-auth name.
func (adyenDialect) apiKey(r *http.Request) (string, error) {
	key := strings.TrimSpace(r.Header.Get("X-API-Key"))
	if key == "" {
		if scheme, cred, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " "); ok && strings.EqualFold(scheme, "basic") {
			key = basicUser(strings.TrimSpace(cred))
		}
	}
	if key == "" {
		return "", adyenFail(http.StatusUnauthorized, "000", "security", "HTTP Status Response - Unauthorized")
	}
	return key, nil
}

// idempotencyKey refuses a key longer than 64 characters (422).
func (adyenDialect) idempotencyKey(r *http.Request) (string, error) {
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if len(key) > adyenMaxKey {
		return "", adyenFail(http.StatusUnprocessableEntity, "702", "validation",
			fmt.Sprintf("Idempotency-Key is %d characters long: at most %d", len(key), adyenMaxKey))
	}
	return key, nil
}

// adyenError is Adyen's error answer: {"status", "errorCode", "message",
// "errorType"}.
type adyenError struct {
	Status    int    `json:"status"`
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
	ErrorType string `json:"errorType"`
	transient bool   // the answer carries Transient-Error: true: retry
}

func adyenFail(status int, code, typ, msg string) *adyenError {
	return &adyenError{Status: status, ErrorCode: code, Message: msg, ErrorType: typ}
}

func (e *adyenError) Error() string { return e.ErrorCode + " " + e.Message }

func (e *adyenError) response() *response {
	r := jsonResponse(e.Status, e)
	if e.transient {
		r.header = map[string]string{"Transient-Error": "true"}
	}
	return r
}

func adyenMissing(name string) *adyenError {
	return adyenFail(http.StatusUnprocessableEntity, "130", "validation", "Required field '"+name+"' is not provided.")
}

func (adyenDialect) failure(err error) *response {
	return failureOf[*adyenError](err, adyenFail(http.StatusBadRequest, "702", "validation", "Unable to parse the request body").response, adyenOutage)
}

// keyReused and keyInUse: "request already processed or in progress"; a
// duplicate in flight is transient (Transient-Error: true), a key reused
// with other parameters is not.
func (adyenDialect) keyReused(string) *response {
	return adyenFail(http.StatusUnprocessableEntity, "704", "validation", "request already processed or in progress").response()
}

func (adyenDialect) keyInUse(string) *response {
	e := adyenFail(http.StatusUnprocessableEntity, "704", "validation", "request already processed or in progress")
	e.transient = true
	return e.response()
}

func (adyenDialect) outage() *response { return adyenOutage() }

func adyenOutage() *response {
	return adyenFail(http.StatusInternalServerError, "000", "internal", "An unknown error occurred (simulated gateway fault)").response()
}

// headers echo the key: "check the Idempotency-Key HTTP header returned
// in the response".
func (adyenDialect) headers(_ *Sim, h http.Header, key string, _ *response) {
	if key != "" {
		h.Set("Idempotency-Key", key)
	}
}

// paymentID draws a pspReference: 16 characters.
func (adyenDialect) paymentID(rnd *rand.Rand) string { return randomID(rnd, "", 16) }

// parseAdyenPayment reads POST /v71/payments: amount {value, currency},
// reference, merchantAccount, paymentMethod ({"type":"scheme","number":
// ...}, encryptedCardNumber or storedPaymentMethodId), metadata.
func parseAdyenPayment(_ *http.Request, a *attempt, params []param) error {
	req := &chargeRequest{metadata: hashUnder(params, "metadata")}
	value, present := field(params, "amount", "value")
	n, ok := jsonAmount(value, present)
	switch {
	case !present:
		return adyenMissing("amount.value")
	case !ok:
		return adyenFail(http.StatusUnprocessableEntity, "137", "validation", "Invalid amount specified")
	}
	req.amount = n
	cur := fieldValue(params, "amount", "currency")
	if !isCurrency(cur) {
		return adyenMissing("amount.currency")
	}
	req.currency = strings.ToLower(cur)
	if req.reference = fieldValue(params, "reference"); req.reference == "" {
		return adyenMissing("reference")
	}
	if fieldValue(params, "merchantAccount") == "" {
		return adyenMissing("merchantAccount")
	}
	req.description = fieldValue(params, "shopperStatement")
	if err := readAdyenMethod(params, req); err != nil {
		return err
	}
	req.fingerprint = fingerprint("POST", "/v71/payments", params)
	a.req, a.op = req, adyenPayment{}
	return nil
}

func readAdyenMethod(params []param, req *chargeRequest) error {
	if fieldValue(params, "paymentMethod", "type") == "" {
		return adyenMissing("paymentMethod.type")
	}
	if num := fieldValue(params, "paymentMethod", "number"); num != "" {
		src, d, ok := cardSource(num)
		if !ok {
			return adyenFail(http.StatusUnprocessableEntity, "101", "validation", "Invalid card number")
		}
		req.source, req.decline = src, d
		return nil
	}
	for _, name := range []string{"storedPaymentMethodId", "encryptedCardNumber"} {
		if v := fieldValue(params, "paymentMethod", name); v != "" {
			req.source = v
			return nil
		}
	}
	return adyenMissing("paymentMethod.number")
}

// adyenPayment is POST /v71/payments: a payment, answered 200,
// Authorised or Refused.
type adyenPayment struct{ payment }

func (adyenPayment) answerLocked(_ *Sim, _ *attempt, c *Charge) *response {
	o := adyenObject{PSPReference: c.ID, ResultCode: "Authorised", MerchantReference: c.Reference,
		Amount: adyenAmount{Value: c.Amount, Currency: strings.ToUpper(c.Currency)}}
	if !c.Succeeded() {
		o.ResultCode, o.RefusalReason, o.RefusalReasonCode = "Refused", "Refused", "2"
	}
	r := jsonResponse(http.StatusOK, o)
	r.chargeID = c.ID
	return r
}

// adyenObject is the /payments answer.
type adyenObject struct {
	PSPReference      string      `json:"pspReference"`
	ResultCode        string      `json:"resultCode"` // Authorised or Refused
	Amount            adyenAmount `json:"amount"`
	MerchantReference string      `json:"merchantReference"`
	RefusalReason     string      `json:"refusalReason,omitempty"`
	RefusalReasonCode string      `json:"refusalReasonCode,omitempty"`
}

type adyenAmount struct {
	Value    int64  `json:"value"`
	Currency string `json:"currency"`
}
