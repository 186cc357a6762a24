package checker

import (
	"encoding/json"
	"mime"
	"net/url"

	"github.com/gowebpki/jcs"

	"github.com/idemcheck/idemcheck/history"
)

// canonicalizer turns requests into the canonical form that payload
// equality compares (docs/protocol.md §3): the method and path as sent
// (an order id in the path makes another request), then the body's
// canonical form. A JSON body is RFC 8785 (key order, whitespace and 100
// vs 1e2 do not matter; strings compare exactly); a form body is its
// decoded parameters sorted by name (parameter order and percent-encoding
// do not matter; values compare exactly, USD is not usd). Forms are
// cached by exact request: a run sends the same bytes many times.
type canonicalizer map[canonKey]string

// canonKey is what an op's canonical request depends on.
type canonKey struct{ method, path, contentType, body string }

// of returns op's canonical request. A body that does not parse compares
// by its exact bytes (it can only equal itself); an empty body, which
// only a hand-written history has, is rebuilt from Order, Amount and
// Currency. An op recorded without a path (an older history) is its
// canonical body alone.
func (c canonicalizer) of(op *history.Op) string {
	body := op.Body
	if body == "" {
		body = synthesize(op)
	}
	key := canonKey{op.Method, op.Path, op.ContentType, body}
	if s, ok := c[key]; ok {
		return s
	}
	s := canonical(op.ContentType, body)
	if op.Path != "" {
		s = op.Method + " " + op.Path + "\n" + s
	}
	c[key] = s
	return s
}

func canonical(contentType, body string) string {
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/x-www-form-urlencoded" {
		return canonicalForm(body)
	}
	if alreadyCanonical(body) {
		return body
	}
	out, err := jcs.Transform([]byte(body))
	if err != nil {
		return "\x00raw:" + body
	}
	return string(out)
}

// canonicalForm is a form body's parameters, decoded and sorted by name
// (url.Values.Encode), each name's values in the order sent.
func canonicalForm(body string) string {
	vals, err := url.ParseQuery(body)
	if err != nil {
		return "\x00raw:" + body
	}
	return "form:" + vals.Encode()
}

func synthesize(op *history.Op) string {
	b, _ := json.Marshal(map[string]any{
		"amount": op.Amount, "currency": op.Currency, "order_id": op.Order,
	})
	return string(b)
}
