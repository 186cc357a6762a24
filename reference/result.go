package reference

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Result is a definitive answer to a charge request: what is stored under
// the key and replayed byte for byte on every retry until the key is
// forgotten.
type Result struct {
	Status   int    // 201 charged, 402 declined, 400 rejected by the gateway
	Body     []byte // exact response body
	ChargeID string // the gateway charge, "" when none moved money
}

// Succeeded reports whether the result is a charge.
func (r Result) Succeeded() bool { return r.Status >= 200 && r.Status < 300 }

// ChargeBody is the success body of docs/protocol.md §2.
type ChargeBody struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	OrderID  string `json:"order_id"`
}

// ResultFor turns a definitive gateway outcome into the stored result. The
// success body reports the gateway's own charge (its id, amount and
// currency), not an echo of the request, so a success always names money
// that moved. It returns false for an indeterminate outcome, which has no
// result.
func ResultFor(o Outcome, p ChargeParams) (Result, bool) {
	switch o.Kind {
	case Charged:
		c := o.Charge
		body := ChargeBody{ID: c.ID, Status: "succeeded", Amount: c.Amount, Currency: c.Currency, OrderID: p.OrderID}
		if id := c.Metadata["order_id"]; id != "" {
			body.OrderID = id
		}
		return Result{Status: http.StatusCreated, Body: mustJSON(body), ChargeID: c.ID}, true
	case Declined:
		e := declineError{Type: "card_error", Code: "card_declined"}
		if o.Error != nil {
			if o.Error.Code != "" {
				e.Code = o.Error.Code
			}
			e.DeclineCode, e.Message, e.Charge = o.Error.DeclineCode, o.Error.Message, o.Error.Charge
		}
		return Result{Status: http.StatusPaymentRequired, Body: mustJSON(struct {
			Error declineError `json:"error"`
		}{e})}, true
	case Rejected:
		detail := "the payment gateway rejected the charge"
		p := Problem{Status: http.StatusBadRequest, Title: "Charge rejected by the gateway", Detail: detail}
		if o.Error != nil {
			p.Detail = detail + ": " + truncate(o.Error.Message, 300)
		}
		return Result{Status: http.StatusBadRequest, Body: p.body()}, true
	}
	return Result{}, false
}

type declineError struct {
	Type        string `json:"type"`
	Code        string `json:"code"`
	DeclineCode string `json:"decline_code,omitempty"`
	Message     string `json:"message,omitempty"`
	Charge      string `json:"charge,omitempty"`
}

// WriteResult writes a stored result; replayed adds Idempotent-Replayed:
// true, the marker the IETF draft suggests.
func WriteResult(w http.ResponseWriter, r Result, replayed bool) {
	h := w.Header()
	switch {
	case r.Succeeded(), r.Status == http.StatusPaymentRequired:
		h.Set("Content-Type", "application/json")
	default:
		h.Set("Content-Type", "application/problem+json")
	}
	if replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	w.WriteHeader(r.Status)
	w.Write(r.Body)
}

// Problem is an RFC 9457 problem detail. Field names the request header or
// body member at fault; RetryAfter, when set, becomes a Retry-After header
// (whole seconds, at least one).
type Problem struct {
	Type       string
	Title      string
	Status     int
	Detail     string
	Field      string
	RetryAfter time.Duration
}

func (p Problem) body() []byte {
	typ := p.Type
	if typ == "" {
		typ = "about:blank"
	}
	title := p.Title
	if title == "" {
		title = http.StatusText(p.Status)
	}
	return mustJSON(struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail,omitempty"`
		Field  string `json:"field,omitempty"`
	}{typ, title, p.Status, p.Detail, p.Field})
}

// WriteProblem writes p as application/problem+json.
func WriteProblem(w http.ResponseWriter, p Problem) {
	if p.RetryAfter > 0 {
		secs := int((p.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	w.Write(p.body())
}

// ProblemFor is the answer to a client-input error: its status (400, 401,
// 413, 415) and the field it names.
func ProblemFor(e *RequestError) Problem {
	p := Problem{Status: e.Status, Detail: e.Error(), Field: e.Field}
	switch e.Status {
	case http.StatusUnauthorized:
		p.Title = "Missing or malformed bearer token"
	case http.StatusRequestEntityTooLarge:
		p.Title = "Request body too large"
	case http.StatusUnsupportedMediaType:
		p.Title = "Unsupported media type"
	default:
		p.Title = "Invalid request"
	}
	return p
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // only our own structs of strings and ints are marshalled
		panic("reference: marshal: " + err.Error())
	}
	return b
}
