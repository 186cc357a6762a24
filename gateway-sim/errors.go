package gatewaysim

import (
	"errors"
	"net/http"
)

// Sentinel errors. The exported ones are returned by the in-process API and
// by Client; the unexported ones classify Stripe API failures and are mapped
// to Stripe's HTTP status codes in one place, statusOf, where they meet HTTP.
var (
	// ErrUnknownHold is returned by Release for a hold id the simulator does
	// not hold (never created, already released, or dropped by Reset).
	ErrUnknownHold = errors.New("gatewaysim: unknown hold")
	// ErrUnknownFault is returned when removing a fault id that is not installed.
	ErrUnknownFault = errors.New("gatewaysim: unknown fault")
	// ErrInvalidFault is returned by Fault.Validate and by the HTTP fault API
	// for a fault that could never fire as described.
	ErrInvalidFault = errors.New("gatewaysim: invalid fault")
	// ErrInvalidTrace is a trace that names no place for the order or
	// several, or an amount expectation that cannot attribute one order.
	ErrInvalidTrace = errors.New("gatewaysim: invalid trace")
	// ErrClosed is returned by WaitEvent once the simulator has been closed.
	ErrClosed = errors.New("gatewaysim: closed")

	errNoAPIKey      = errors.New("no api key")             // 401
	errInvalidParam  = errors.New("invalid request")        // 400 invalid_request_error
	errNotFound      = errors.New("no such resource")       // 404
	errDeclined      = errors.New("card declined")          // 402 card_error
	errKeyInUse      = errors.New("idempotency key in use") // 409
	errKeyReused     = errors.New("idempotency key reused") // 400 idempotency_error
	errLocked        = errors.New("object locked")          // 429 lock_timeout
	errGatewayFailed = errors.New("gateway failure")        // 500 api_error
)

// statusOf maps a Stripe API failure to the status code Stripe uses for it.
func statusOf(err error) int {
	switch {
	case errors.Is(err, errNoAPIKey):
		return http.StatusUnauthorized
	case errors.Is(err, errNotFound):
		return http.StatusNotFound
	case errors.Is(err, errDeclined):
		return http.StatusPaymentRequired
	case errors.Is(err, errKeyInUse):
		return http.StatusConflict
	case errors.Is(err, errLocked):
		return http.StatusTooManyRequests
	case errors.Is(err, errInvalidParam), errors.Is(err, errKeyReused):
		return http.StatusBadRequest
	default:
		return http.StatusInternalServerError
	}
}

// Stripe error types, the "type" field of an error object.
const (
	typeInvalidRequest = "invalid_request_error"
	typeCard           = "card_error"
	typeIdempotency    = "idempotency_error"
	typeAPI            = "api_error"
)

// apiError is a Stripe error object; its kind is one of the sentinels above.
type apiError struct {
	kind        error
	Type        string `json:"type"`
	Code        string `json:"code,omitempty"`
	DeclineCode string `json:"decline_code,omitempty"`
	Param       string `json:"param,omitempty"`
	Message     string `json:"message"`
	Charge      string `json:"charge,omitempty"`
	DocURL      string `json:"doc_url,omitempty"`
	// PaymentIntent is the PaymentIntent an error is about, in its state
	// after the failed request, as Stripe embeds it (a decline leaves it
	// requires_payment_method).
	PaymentIntent *intentObject `json:"payment_intent,omitempty"`
}

func (e *apiError) Error() string { return e.Message }
func (e *apiError) Unwrap() error { return e.kind }

// invalidParam is the 400 Stripe sends for a bad or missing parameter.
func invalidParam(param, code, msg string) *apiError {
	return &apiError{kind: errInvalidParam, Type: typeInvalidRequest, Code: code, Param: param, Message: msg}
}

// invalidRequest is a 400 that names no single parameter (a body that does
// not parse at all).
func invalidRequest(msg string) *apiError {
	return &apiError{kind: errInvalidParam, Type: typeInvalidRequest, Message: msg}
}

func noAPIKey() *apiError {
	return &apiError{kind: errNoAPIKey, Type: typeInvalidRequest,
		Message: "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY')."}
}

func notFound(code, param, msg string) *apiError {
	return &apiError{kind: errNotFound, Type: typeInvalidRequest, Code: code, Param: param, Message: msg}
}

func keyInUse(key string) *apiError {
	return &apiError{kind: errKeyInUse, Type: typeIdempotency, Code: "idempotency_key_in_use",
		Message: "There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): " + key + ". Please try again later."}
}

func keyReused(key string) *apiError {
	return &apiError{kind: errKeyReused, Type: typeIdempotency,
		Message: "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '" + key + "' if you meant to execute a different request."}
}

// locked is Stripe's answer to a request on an object another request is
// changing (a second confirm while the first waits out a latency fault):
// 429 lock_timeout, which stripe-go retries.
func locked() *apiError {
	return &apiError{kind: errLocked, Type: typeInvalidRequest, Code: "lock_timeout",
		Message: "This object cannot be accessed right now because another API request or Stripe process is currently accessing it. If you see this error intermittently, retry the request."}
}

func gatewayFailed() *apiError {
	return &apiError{kind: errGatewayFailed, Type: typeAPI,
		Message: "An unknown error occurred while processing the request (simulated gateway fault)."}
}
