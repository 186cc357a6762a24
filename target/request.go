package target

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Request is one charge request as it goes on the wire: what the client
// sends and the history records, so that the checker compares exactly
// what the server saw.
type Request struct {
	Method      string
	Path        string
	ContentType string
	Body        []byte
}

// Writing says how to write one request's body. The zero Writing is the
// plain form: the template's own order, no extra whitespace.
type Writing struct {
	// Style writes the same body differently (one of Styles; "" plain).
	Style string
	// Edit changes the static field this JSON pointer names (one of
	// Body.StaticFields): a different body whose payment values are the
	// same.
	Edit string
}

// pathPlaceholders are the names protocol.path may hold in braces, each
// a payment's value, path-escaped when sent.
var pathPlaceholders = map[string]string{"order_id": PlaceOrderID, "amount": PlaceAmount, "currency": PlaceCurrency}

// pathPlaceRE matches one {name} of a path template.
var pathPlaceRE = regexp.MustCompile(`\{[^{}]*\}`)

// pathPlaces returns the payment values a path template names, or an
// error naming an unknown placeholder.
func pathPlaces(path string) ([]string, error) {
	var names []string
	for _, tok := range pathPlaceRE.FindAllString(path, -1) {
		name, ok := pathPlaceholders[strings.Trim(tok, "{}")]
		if !ok {
			return nil, fmt.Errorf("unknown placeholder %s: expected {order_id}, {amount} or {currency}", tok)
		}
		names = append(names, name)
	}
	if strings.ContainsAny(pathPlaceRE.ReplaceAllString(path, ""), "{}") {
		return nil, fmt.Errorf("unbalanced brace in %q: a placeholder is written {order_id}", path)
	}
	return names, nil
}

// RequestPath is protocol.path with its placeholders replaced by the
// payment's values, each path-escaped.
func (p Protocol) RequestPath(pay Payment) string {
	return pathPlaceRE.ReplaceAllStringFunc(p.Path, func(tok string) string {
		return url.PathEscape(pay.value(pathPlaceholders[strings.Trim(tok, "{}")]))
	})
}

// Request writes the charge request for a payment: POST to the path
// with its placeholders filled, the body template rendered in the
// target's encoding and written as w says, and the Content-Type that
// encoding has.
func (p Protocol) Request(pay Payment, w Writing) (Request, error) {
	body, err := p.RequestBody(pay, w)
	if err != nil {
		return Request{}, err
	}
	return Request{Method: http.MethodPost, Path: p.RequestPath(pay), ContentType: ContentType(p.Encoding), Body: body}, nil
}

// Template is the body template in use: protocol.body, or without one
// the reference protocol's body in the mapping of p.Fields (built on
// each call, so a change to Fields is seen).
func (p Protocol) Template() *Body {
	if p.Body != nil {
		return p.Body
	}
	return defaultBody(p.Fields)
}

// RequestBody renders the body template for a payment and writes it.
func (p Protocol) RequestBody(pay Payment, w Writing) ([]byte, error) {
	tmpl := p.Template()
	root := render(tmpl.root, pay).(*object)
	if w.Edit != "" {
		if !slices.ContainsFunc(tmpl.StaticFields(), func(f StaticField) bool { return f.Pointer == w.Edit }) {
			return nil, fmt.Errorf("edit %s: expected the pointer of one of the body's static fields", w.Edit)
		}
		if err := edit(root, w.Edit); err != nil {
			return nil, err
		}
	}
	if !slices.Contains(p.Writings(), w.Style) && w.Style != "" {
		return nil, fmt.Errorf("writing %q: a %s body can be written %s", w.Style, p.encoding(), strings.Join(p.Writings(), ", "))
	}
	if p.encoding() == EncodingForm {
		return writeFormStyle(formParams(root, "", nil), w.Style), nil
	}
	var b bytes.Buffer
	writeJSON(&b, root, jsonStyle{reversed: w.Style == WriteReordered, spaced: w.Style == WriteWhitespace, exponent: w.Style == WriteExponent})
	return b.Bytes(), nil
}

func (p Protocol) encoding() string {
	if p.Encoding == "" {
		return EncodingJSON
	}
	return p.Encoding
}

// writeFormStyle orders the parameters as the style says and writes them.
func writeFormStyle(ps []param, style string) []byte {
	switch style {
	case WriteReordered:
		slices.Reverse(ps)
	case WriteRotated:
		ps = append(ps[1:], ps[0])
	}
	return writeForm(ps)
}

// Writings lists the styles in which this protocol's bodies can be
// written differently but equally: key order and whitespace for JSON
// (and number spelling when the template has a whole number of its
// own), parameter order for a form body (rotated only when there are
// three parameters or more, where it differs from reversed).
func (p Protocol) Writings() []string {
	tmpl := p.Template()
	if p.encoding() == EncodingForm {
		if len(formParams(render(tmpl.root, Payment{}), "", nil)) >= 3 {
			return []string{WriteReordered, WriteRotated}
		}
		return []string{WriteReordered}
	}
	out := []string{WriteReordered, WriteWhitespace}
	whole := false
	walk(render(tmpl.root, Payment{}), "", func(_ string, leaf any) error {
		if n, ok := leaf.(staticNumber); ok && n.whole() {
			whole = true
		}
		return nil
	})
	if whole {
		out = append(out, WriteExponent)
	}
	return out
}

// checkShape validates protocol.path's placeholders, protocol.encoding
// and protocol.body, and refuses a request shape that cannot express a
// payment: the order id, the amount and the currency must each appear
// in the path or the body, or the server cannot be told what to charge.
func (t *Target) checkShape() error {
	p := &t.Protocol
	used := map[string]bool{}
	names, err := pathPlaces(p.Path)
	if err != nil {
		return bad("protocol.path", "%v", err)
	}
	for _, n := range names {
		used[n] = true
	}
	if p.Encoding != EncodingJSON && p.Encoding != EncodingForm {
		return bad("protocol.encoding", "expected json or form, got %q", p.Encoding)
	}
	if err := p.Template().check("protocol.body", used); err != nil {
		return err
	}
	for _, need := range []struct{ name, what, path string }{{PlaceOrderID, "order id", "order_id"}, {PlaceAmount, "amount", "amount"}, {PlaceCurrency, "currency", "currency"}} {
		if !used[need.name] {
			return bad("protocol.body", "the request never names the payment's %s: expected {{.%s}} in a field of protocol.body, or {%s} in protocol.path", need.what, need.name, need.path)
		}
	}
	return nil
}
