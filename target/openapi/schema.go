package openapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// prop is one property of a body schema, at any depth: its names from
// the body's root, its schema, and where the document defines it.
type prop struct {
	path     []string
	schema   *openapi3.Schema
	ptr      string
	line     int
	required bool // required at every level from the root
}

func (p prop) name() string { return p.path[len(p.path)-1] }

// dotted is the path as a flag takes it: metadata.order_id.
func (p prop) dotted() string { return strings.Join(p.path, ".") }

// field is the path as protocol.fields takes it: a bare name at the top
// level, a JSON pointer below it (/metadata/order_id).
func (p prop) field() string {
	if len(p.path) == 1 {
		return p.path[0]
	}
	return pointer("", p.path...)
}

// member is a property of one object schema.
type member struct {
	name     string
	ref      *openapi3.SchemaRef
	required bool
	ptr      string
	line     int
}

// maxDepth bounds how deep properties are looked for (and a recursive
// schema's recursion).
const maxDepth = 6

// members lists an object schema's properties in the document's order,
// with those of its allOf parts and of its first oneOf or anyOf choice.
// ptr is where the schema is; a $ref moves it to the referenced schema.
func members(ref *openapi3.SchemaRef, ptr string) []member {
	if ref == nil || ref.Value == nil {
		return nil
	}
	if strings.HasPrefix(ref.Ref, "#/") {
		ptr = ref.Ref
	}
	s := ref.Value
	var out []member
	for name, pr := range s.Properties {
		p := pointer(ptr, "properties", name)
		line := 0
		if pr != nil && pr.Value != nil {
			line = lineOf(pr.Value.Origin, "")
		}
		out = append(out, member{name: name, ref: pr, required: slices.Contains(s.Required, name), ptr: p, line: line})
	}
	slices.SortFunc(out, func(a, b member) int {
		return cmp.Or(cmp.Compare(a.line, b.line), strings.Compare(a.name, b.name))
	})
	for i, part := range s.AllOf {
		out = append(out, members(part, pointer(ptr, "allOf", fmt.Sprint(i)))...)
	}
	for _, alt := range []struct {
		kw   string
		refs openapi3.SchemaRefs
	}{{"oneOf", s.OneOf}, {"anyOf", s.AnyOf}} {
		if len(alt.refs) > 0 {
			out = append(out, members(alt.refs[0], pointer(ptr, alt.kw, "0"))...)
		}
	}
	for _, req := range s.Required { // required by an allOf whole of a property a part declares
		for i := range out {
			if out[i].name == req {
				out[i].required = true
			}
		}
	}
	return out
}

// props lists every property below a schema, depth first in document
// order, not descending into arrays.
func props(ref *openapi3.SchemaRef, ptr string) []prop {
	var out []prop
	var visit func(ref *openapi3.SchemaRef, ptr string, path []string, req bool)
	visit = func(ref *openapi3.SchemaRef, ptr string, path []string, req bool) {
		if len(path) >= maxDepth {
			return
		}
		for _, m := range members(ref, ptr) {
			if m.ref == nil || m.ref.Value == nil {
				continue
			}
			p := prop{path: append(slices.Clip(path), m.name), schema: m.ref.Value, ptr: m.ptr, line: m.line, required: req && m.required}
			out = append(out, p)
			visit(m.ref, m.ptr, p.path, p.required)
		}
	}
	visit(ref, ptr, nil, true)
	return out
}

// is says whether a schema is of one JSON type (3.1's [t, "null"] too).
func is(s *openapi3.Schema, typ string) bool {
	return s.Type.Includes(typ)
}

// A role is one of the payment's values a request or an answer holds.
type role struct {
	what  string // "amount", in messages
	flag  string // the flag that names its property
	place string // the body placeholder, "{{.Amount}}"
	key   string // its protocol.fields key
	hint  string // what a candidate looks like, for messages
	match func(p prop) bool
}

var (
	amountNames   = []string{"amount", "amountminor", "amountminorunits", "amountinminorunits", "amountcents"}
	currencyNames = []string{"currency", "currencycode", "currencyiso"}
	orderNames    = []string{"orderid", "order", "orderreference", "orderref", "ordernumber", "reference", "merchantreference", "merchantorderid", "clientreferenceid"}
)

var roles = []role{
	{what: "amount", flag: "--amount", place: "{{.Amount}}", key: "amount",
		hint: "an integer named amount or amount_minor, or value inside amount",
		match: func(p prop) bool {
			if !is(p.schema, "integer") && !(is(p.schema, "number") && strings.HasPrefix(p.schema.Format, "int")) {
				return false
			}
			n := normal(p.name())
			if n == "value" && len(p.path) > 1 {
				return slices.Contains(amountNames, normal(p.path[len(p.path)-2])) || normal(p.path[len(p.path)-2]) == "money"
			}
			return slices.Contains(amountNames, n)
		}},
	{what: "currency", flag: "--currency", place: "{{.Currency}}", key: "currency",
		hint: "a three-letter string named currency",
		match: func(p prop) bool {
			return is(p.schema, "string") && slices.Contains(currencyNames, normal(p.name())) && threeLetters(p.schema)
		}},
	{what: "order id", flag: "--order-id", place: "{{.OrderID}}", key: "order_id",
		hint:  "a string named order_id, orderId, reference or merchant_reference",
		match: func(p prop) bool { return is(p.schema, "string") && slices.Contains(orderNames, normal(p.name())) }},
}

// threeLetters says whether a currency schema admits ISO 4217 codes:
// its lengths, enum and example allow three letters.
func threeLetters(s *openapi3.Schema) bool {
	if s.MinLength > 3 || (s.MaxLength != nil && *s.MaxLength < 3) {
		return false
	}
	for _, v := range append(slices.Clip(s.Enum), s.Example) {
		if str, ok := v.(string); ok && len(str) != 3 {
			return false
		}
	}
	return true
}

// pick finds the property that holds a role among a body's properties:
// the one a flag names (path), else the one candidate. It returns false
// when there is none, and an error naming the candidates when there are
// several; at and atLine are where the body's schema is, for errors.
func (s *spec) pick(r role, all []prop, path []string, side string, at string, atLine int) (prop, bool, error) {
	if path != nil {
		for _, p := range all {
			if slices.Equal(p.path, path) {
				return p, true, nil
			}
		}
	}
	var cands []prop
	for _, p := range all {
		if r.match(p) {
			cands = append(cands, p)
		}
	}
	switch len(cands) {
	case 0:
		return prop{}, false, nil
	case 1:
		return cands[0], true, nil
	}
	var names []string
	for _, c := range cands {
		names = append(names, fmt.Sprintf("%s (line %d)", c.dotted(), c.line))
	}
	return prop{}, false, s.fail(atLine, at, "%d properties of the %s could be the %s: %s; name the one to use with %s %s, or edit the written file's protocol section",
		len(cands), side, r.what, strings.Join(names, ", "), r.flag, cands[0].dotted())
}

// flagPath parses a flag's property path: metadata.order_id or the JSON
// pointer /metadata/order_id.
func flagPath(s string) []string {
	if s == "" {
		return nil
	}
	if strings.HasPrefix(s, "/") {
		parts := strings.Split(s[1:], "/")
		for i, p := range parts {
			parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(p)
		}
		return parts
	}
	return strings.Split(s, ".")
}
