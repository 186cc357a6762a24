package target

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Encodings of protocol.encoding, and the Content-Type each is sent with.
const (
	EncodingJSON = "json"
	EncodingForm = "form"
)

// ContentType is the media type a body of this encoding is sent as.
func ContentType(encoding string) string {
	if encoding == EncodingForm {
		return "application/x-www-form-urlencoded"
	}
	return "application/json"
}

// Ways to write one body differently but equally (Writing.Style). A
// server must take each for the same request as the plain form
// (docs/protocol.md §3); which of them a body can show depends on its
// encoding and content (Protocol.Writings).
const (
	// WriteReordered reverses the members of every JSON object, or the
	// parameters of a form body.
	WriteReordered = "reordered"
	// WriteRotated moves a form body's first parameter to the end: another
	// order than reversed when there are three or more.
	WriteRotated = "rotated"
	// WriteWhitespace adds spaces and line breaks between JSON tokens.
	WriteWhitespace = "whitespace"
	// WriteExponent spells every static whole number of a JSON body with
	// an exponent (2 as 2e0).
	WriteExponent = "exponent"
)

// Styles lists every writing style, for validating scenario files.
var Styles = []string{WriteReordered, WriteRotated, WriteWhitespace, WriteExponent}

// jsonStyle says how writeJSON spells a document.
type jsonStyle struct{ reversed, spaced, exponent bool }

// writeJSON writes a rendered tree as JSON. Arrays keep their order in
// every style: their order is meaning, not spelling.
func writeJSON(b *bytes.Buffer, v any, st jsonStyle) {
	sep, colon := ",", ":"
	if st.spaced {
		sep, colon = " ,\n  ", " : "
	}
	switch v := v.(type) {
	case *object:
		ms := v.members
		if st.reversed {
			ms = slices.Clone(ms)
			slices.Reverse(ms)
		}
		b.WriteString("{")
		for i, m := range ms {
			if i > 0 {
				b.WriteString(sep)
			}
			writeScalar(b, m.key)
			b.WriteString(colon)
			writeJSON(b, m.value, st)
		}
		b.WriteString("}")
	case []any:
		b.WriteString("[")
		for i, x := range v {
			if i > 0 {
				b.WriteString(sep)
			}
			writeJSON(b, x, st)
		}
		b.WriteString("]")
	case staticNumber:
		if st.exponent && v.whole() {
			fmt.Fprintf(b, "%se0", v.text())
			return
		}
		b.WriteString(v.text())
	default:
		writeScalar(b, v)
	}
}

// writeScalar writes a string, number, boolean or null as JSON.
func writeScalar(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// staticNumber marks a number written in the template itself, the only
// kind WriteExponent respells: the amount is the payment's, and a server
// may read it as an integer field.
type staticNumber struct{ v any }

func (n staticNumber) text() string {
	switch v := n.v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

func (n staticNumber) whole() bool {
	f, ok := n.v.(float64)
	return !ok || (f == math.Trunc(f) && math.Abs(f) < 1e15)
}

// param is one form parameter.
type param struct{ key, value string }

// formParams flattens a rendered tree into form parameters as Stripe's
// clients do: a nested field's key is its path in brackets
// (metadata[order_id]), a list item's its index (items[0][price]).
func formParams(v any, prefix string, out []param) []param {
	key := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "[" + k + "]"
	}
	switch v := v.(type) {
	case *object:
		for _, m := range v.members {
			out = formParams(m.value, key(m.key), out)
		}
		return out
	case []any:
		for i, x := range v {
			out = formParams(x, key(strconv.Itoa(i)), out)
		}
		return out
	}
	return append(out, param{prefix, formValue(v)})
}

func formValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case staticNumber:
		return v.text()
	}
	return fmt.Sprint(v)
}

// writeForm writes parameters as application/x-www-form-urlencoded,
// keeping brackets in keys readable (metadata[order_id], as curl -d and
// Stripe's documentation write them; every form parser reads both).
func writeForm(ps []param) []byte {
	parts := make([]string, len(ps))
	keyEsc := strings.NewReplacer("%5B", "[", "%5D", "]")
	for i, p := range ps {
		parts[i] = keyEsc.Replace(url.QueryEscape(p.key)) + "=" + url.QueryEscape(p.value)
	}
	return []byte(strings.Join(parts, "&"))
}
