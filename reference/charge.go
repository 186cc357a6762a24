package reference

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Limits on client input.
const (
	// MaxBodyBytes is the largest request body accepted; a larger one is
	// refused with 413 before it is read further.
	MaxBodyBytes = 64 << 10
	// MaxAmount is the largest amount in minor units, Stripe's eight digits.
	MaxAmount = 99_999_999
	// MaxOrderIDLen bounds order_id, which travels to the gateway as metadata.
	MaxOrderIDLen = 255
	// MaxDescriptionLen bounds description, which travels to the gateway.
	MaxDescriptionLen = 1000
)

var currencyPattern = regexp.MustCompile(`^[a-z]{3}$`)

// ChargeParams are the fields of a charge that reach the gateway. They are
// stored with the claim so that recovery can re-send exactly the same
// request under the same gateway idempotency key.
type ChargeParams struct {
	Amount      int64
	Currency    string
	OrderID     string
	Description string
}

// ChargeRequest is a parsed, validated POST /v1/charges.
type ChargeRequest struct {
	Tenant      string // TenantID of the bearer token
	Key         string // the idempotency key, unquoted
	KeyHash     []byte // KeyHash(Key)
	Fingerprint []byte // Fingerprint(method, path, Canonical)
	Body        []byte // the body as received
	Canonical   []byte // RFC 8785 form of the body
	Params      ChargeParams
}

// ParseCharge reads and validates a charge request. Checks run in the order
// a client can fix them: credentials (401), key (400), media type (415),
// size (413), JSON (400), fields (400 naming the field). On a field error
// the returned request is still filled in up to its fingerprint, so the
// caller can prefer a 422 when the key is already bound to another body.
// It never returns a 5xx status and never panics on any input.
func ParseCharge(r *http.Request) (*ChargeRequest, error) {
	token, err := ParseBearer(r.Header)
	if err != nil {
		return nil, err
	}
	key, err := ParseIdempotencyKey(r.Header.Values("Idempotency-Key"))
	if err != nil {
		return nil, err
	}
	if err := checkMediaType(r.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	canonical, err := Canonicalize(body)
	if err != nil {
		return nil, badField("body", "not valid JSON: "+truncate(err.Error(), 200))
	}
	req := &ChargeRequest{
		Tenant:      TenantID(token),
		Key:         key,
		KeyHash:     KeyHash(key),
		Fingerprint: Fingerprint(r.Method, r.URL.Path, canonical),
		Body:        body,
		Canonical:   canonical,
	}
	req.Params, err = ParseChargeBody(canonical)
	return req, err
}

func checkMediaType(ct string) error {
	if ct == "" {
		return nil // curl -d sends a form type; a missing type is taken as JSON
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return &RequestError{Status: http.StatusUnsupportedMediaType, Field: "Content-Type",
		Detail: "must be application/json", Kind: ErrMediaType}
}

func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, badField("body", "a JSON object is required")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, badField("body", "could not be read")
	}
	if len(body) > MaxBodyBytes {
		return nil, &RequestError{Status: http.StatusRequestEntityTooLarge, Field: "body",
			Detail: "larger than 64 KiB", Kind: ErrBodyTooLarge}
	}
	return body, nil
}

// ParseChargeBody validates the fields of a charge body (any JSON; the
// canonical form is cheapest to parse) and returns the gateway parameters.
// Unknown members are allowed: they are covered by the fingerprint but do not
// reach the gateway.
func ParseChargeBody(body []byte) (ChargeParams, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return ChargeParams{}, badField("body", "must be a JSON object")
	}
	var p ChargeParams
	var err error
	if p.Amount, err = parseAmount(fields["amount"]); err != nil {
		return p, err
	}
	if p.Currency, err = parseString(fields, "currency", true); err != nil {
		return p, err
	}
	if !currencyPattern.MatchString(p.Currency) {
		return p, badField("currency", "must be a three-letter lowercase ISO 4217 code")
	}
	if p.OrderID, err = parseString(fields, "order_id", true); err != nil {
		return p, err
	}
	if err := checkText("order_id", p.OrderID, MaxOrderIDLen); err != nil {
		return p, err
	}
	if p.Description, err = parseString(fields, "description", false); err != nil {
		return p, err
	}
	if err := checkText("description", p.Description, MaxDescriptionLen); err != nil {
		return p, err
	}
	if m, ok := fields["metadata"]; ok && !isNull(m) && !bytes.HasPrefix(bytes.TrimSpace(m), []byte("{")) {
		return p, badField("metadata", "must be a JSON object")
	}
	return p, nil
}

// parseAmount accepts any JSON number whose value is a positive integer
// (`1250`, `1.25e3`), since equal JSON must be treated as the same request.
func parseAmount(raw json.RawMessage) (int64, error) {
	if raw == nil || isNull(raw) {
		return 0, badField("amount", "is required")
	}
	// A JSON number, not a string: encoding/json would read "100" into a
	// json.Number, and a string amount is a different request.
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, badField("amount", "must be a positive integer number of minor units")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f <= 0 {
		return 0, badField("amount", "must be a positive integer number of minor units")
	}
	if f > MaxAmount {
		return 0, badField("amount", "must be at most 99999999")
	}
	return int64(f), nil
}

func parseString(fields map[string]json.RawMessage, name string, required bool) (string, error) {
	raw, ok := fields[name]
	if !ok || isNull(raw) {
		if required {
			return "", badField(name, "is required")
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", badField(name, "must be a string")
	}
	if required && s == "" {
		return "", badField(name, "must not be empty")
	}
	return s, nil
}

func checkText(name, s string, max int) error {
	if len(s) > max {
		return badField(name, "longer than "+strconv.Itoa(max)+" bytes")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return badField(name, "must not contain control characters")
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// isFieldError reports whether err is a body-field failure (as opposed to
// bad credentials, key, size or JSON syntax).
func isFieldError(err error) bool {
	var re *RequestError
	return errors.As(err, &re) && errors.Is(err, ErrBadBody) && re.Field != "body"
}
