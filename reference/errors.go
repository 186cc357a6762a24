package reference

import (
	"errors"
	"fmt"
	"net/http"
)

// Sentinel errors. They meet HTTP in one place: RequestError carries the
// status for client input, and the Server maps store and gateway failures to
// retryable statuses itself.
var (
	// ErrNotFound is returned by Store.Lookup when no row holds the key.
	ErrNotFound = errors.New("reference: key not found")
	// ErrBadKey means the Idempotency-Key header is missing or malformed (400).
	ErrBadKey = errors.New("bad idempotency key")
	// ErrUnauthorized means the Authorization header carries no usable bearer token (401).
	ErrUnauthorized = errors.New("missing or malformed bearer token")
	// ErrBodyTooLarge means the body exceeds MaxBodyBytes (413).
	ErrBodyTooLarge = errors.New("body too large")
	// ErrBadBody means the body is not canonicalisable JSON or a field is invalid (400).
	ErrBadBody = errors.New("bad request body")
	// ErrMediaType means the Content-Type is present and not JSON (415).
	ErrMediaType = errors.New("unsupported media type")
)

// RequestError is a client-input failure: it names the offending field or
// header and carries the status it is answered with. Client input never
// produces a 5xx.
type RequestError struct {
	Status int    // 400, 401, 413 or 415
	Field  string // the header or body field at fault, e.g. "Idempotency-Key", "amount"
	Detail string // human-readable, safe to echo back
	Kind   error  // one of the sentinels above
}

func (e *RequestError) Error() string {
	if e.Field == "" {
		return e.Detail
	}
	return fmt.Sprintf("%s: %s", e.Field, e.Detail)
}

func (e *RequestError) Unwrap() error { return e.Kind }

func badKey(detail string) *RequestError {
	return &RequestError{Status: http.StatusBadRequest, Field: "Idempotency-Key", Detail: detail, Kind: ErrBadKey}
}

func badField(field, detail string) *RequestError {
	return &RequestError{Status: http.StatusBadRequest, Field: field, Detail: detail, Kind: ErrBadBody}
}
