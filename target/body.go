package target

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
)

// Body is protocol.body: the request body a server expects, as a YAML
// tree whose string leaves may hold the payment's values as placeholders
// ({{.Amount}}, {{.Currency}}, {{.OrderID}}, {{.Description}}), and whose
// other leaves are static fields the server requires (customer: cus_123).
//
// It is a tree, not text, so that one template serves both encodings (a
// JSON document, or a form body with Stripe's bracket keys,
// metadata[order_id]=…), every value is escaped by the writer rather than
// by the template's author, and the harness can write one body in several
// equal ways (members in another order, other whitespace) and change one
// static field, which text could not do without parsing it back.
//
// A leaf that is exactly {{.Amount}} is written as a JSON number; any
// other templated leaf is a string. Member order is kept as written.
type Body struct {
	root *object
	// notMapping is set by UnmarshalYAML for a body that is not a
	// mapping; check reports it, where the error can be given a line.
	notMapping bool
}

// member is one key of a mapping, in the order the file gives it.
type member struct {
	key   string
	value any // *object, []any, string (maybe templated), or a static scalar
}

// object is a mapping with its members in order.
type object struct{ members []member }

// get returns the value under key, or nil.
func (o *object) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// put sets key to v, in place when it exists, else as the last member.
func (o *object) put(key string, v any) {
	for i := range o.members {
		if o.members[i].key == key {
			o.members[i].value = v
			return
		}
	}
	o.members = append(o.members, member{key: key, value: v})
}

// The payment's values a template may name.
const (
	PlaceAmount      = "Amount"
	PlaceCurrency    = "Currency"
	PlaceOrderID     = "OrderID"
	PlaceDescription = "Description"
)

// placeholders are the names a body template may use, in doc order.
var placeholders = []string{PlaceAmount, PlaceCurrency, PlaceOrderID, PlaceDescription}

// placeRE matches one body placeholder, {{.Name}}; anything else between
// {{ and }} is refused at load time.
var placeRE = regexp.MustCompile(`\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// UnmarshalYAML reads protocol.body keeping every mapping's order.
func (b *Body) UnmarshalYAML(data []byte) error {
	var v any
	if err := yaml.UnmarshalWithOptions(data, &v, yaml.UseOrderedMap()); err != nil {
		return err
	}
	root, ok := tree(v).(*object)
	b.root, b.notMapping = root, !ok
	if !ok {
		b.root = &object{}
	}
	return nil
}

// ParseBody reads a body template from YAML, for targets built in code
// (builtin) and tests.
func ParseBody(src string) (*Body, error) {
	b := &Body{}
	if err := b.UnmarshalYAML([]byte(src)); err != nil {
		return nil, err
	}
	if b.notMapping {
		return nil, fmt.Errorf("expected a mapping of the body's fields")
	}
	return b, nil
}

// tree converts a decoded YAML value into the template's own types.
func tree(v any) any {
	switch v := v.(type) {
	case yaml.MapSlice:
		o := &object{}
		for _, it := range v {
			o.put(fmt.Sprint(it.Key), tree(it.Value))
		}
		return o
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = tree(x)
		}
		return out
	}
	return v
}

// defaultBody is the body of the reference protocol (docs/protocol.md §1),
// in the target's field mapping: the payment's amount, currency, order
// and description, and a free metadata object whose nested fields let
// key-reuse change a field the payment's values do not name.
func defaultBody(f Fields) *Body {
	b := &Body{root: &object{}}
	b.set(f.Amount, "{{.Amount}}")
	b.set(f.Currency, "{{.Currency}}")
	b.set(f.OrderID, "{{.OrderID}}")
	b.set("description", "{{.Description}}")
	b.set("/metadata/cart/items", uint64(2))
	b.set("/metadata/cart/sku", "abc")
	return b
}

// set puts v at the field a mapping names, creating objects on its way
// (an existing non-object is replaced). A mapping that does not parse is
// used as a bare name: checkFields refuses it anyway.
func (b *Body) set(field string, v any) {
	path, err := FieldPath(field)
	if err != nil {
		path = []string{field}
	}
	cur := b.root
	for _, k := range path[:len(path)-1] {
		next, _ := cur.get(k)
		o, ok := next.(*object)
		if !ok {
			o = &object{}
			cur.put(k, o)
		}
		cur = o
	}
	cur.put(path[len(path)-1], v)
}

// Payment is what one charge request asks for: the values a body
// template and path placeholders name.
type Payment struct {
	Amount      int64
	Currency    string
	OrderID     string
	Description string
}

// value is a payment's value for a placeholder name, as text.
func (p Payment) value(name string) string {
	switch name {
	case PlaceAmount:
		return strconv.FormatInt(p.Amount, 10)
	case PlaceCurrency:
		return p.Currency
	case PlaceOrderID:
		return p.OrderID
	}
	return p.Description
}

// placesIn returns the placeholders of one string leaf, in order, or an
// error naming the first one that is not a payment's value.
func placesIn(s string) ([]string, error) {
	var names []string
	for rest := s; ; {
		i := strings.Index(rest, "{{")
		if i < 0 {
			return names, nil
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return nil, fmt.Errorf("unterminated placeholder in %q: expected %s", s, placeList())
		}
		tok := rest[i : i+j+2]
		m := placeRE.FindStringSubmatch(tok)
		if m == nil || m[0] != tok || !isPlace(m[1]) {
			return nil, fmt.Errorf("unknown placeholder %s: expected one of %s", tok, placeList())
		}
		names = append(names, m[1])
		rest = rest[i+j+2:]
	}
}

func isPlace(name string) bool {
	for _, p := range placeholders {
		if p == name {
			return true
		}
	}
	return false
}

func placeList() string {
	out := make([]string, len(placeholders))
	for i, p := range placeholders {
		out[i] = "{{." + p + "}}"
	}
	return strings.Join(out, ", ")
}

// check refuses an unknown placeholder and a number JSON cannot write
// (.nan, .inf), naming the leaf's field (field is "protocol.body"), and
// records in used every placeholder the body names.
func (b *Body) check(field string, used map[string]bool) error {
	if b.notMapping {
		return bad(field, "expected a mapping of the body's fields (amount: \"{{.Amount}}\", …)")
	}
	return walk(b.root, field, func(f string, leaf any) error {
		if x, ok := leaf.(float64); ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
			return bad(f, "expected a finite number, got %v (JSON has none; quote it, \"NaN\", if the server wants the text)", x)
		}
		s, ok := leaf.(string)
		if !ok {
			return nil
		}
		names, err := placesIn(s)
		if err != nil {
			return bad(f, "%v", err)
		}
		for _, n := range names {
			used[n] = true
		}
		return nil
	})
}

// walk calls fn on every leaf of v with its field path, in document order.
func walk(v any, field string, fn func(field string, leaf any) error) error {
	switch v := v.(type) {
	case *object:
		for _, m := range v.members {
			if err := walk(m.value, field+"."+m.key, fn); err != nil {
				return err
			}
		}
		return nil
	case []any:
		for i, x := range v {
			if err := walk(x, fmt.Sprintf("%s[%d]", field, i), fn); err != nil {
				return err
			}
		}
		return nil
	}
	return fn(field, v)
}

// render returns a copy of the tree with every placeholder replaced by
// the payment's value: a leaf that is exactly {{.Amount}} becomes the
// amount as a number, any other templated leaf a string, and a number
// of the template a staticNumber. Placeholders
// were checked at load time; one left unknown renders empty.
func render(v any, p Payment) any {
	switch v := v.(type) {
	case *object:
		o := &object{members: make([]member, len(v.members))}
		for i, m := range v.members {
			o.members[i] = member{key: m.key, value: render(m.value, p)}
		}
		return o
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = render(x, p)
		}
		return out
	case string:
		if m := placeRE.FindStringSubmatch(v); m != nil && m[0] == v && m[1] == PlaceAmount {
			return p.Amount
		}
		return placeRE.ReplaceAllStringFunc(v, func(tok string) string {
			return p.value(placeRE.FindStringSubmatch(tok)[1])
		})
	case uint64, int64, int, float64:
		return staticNumber{v}
	}
	return v
}

// StaticField is a leaf of a body template that names none of the
// payment's values: a field the server requires (customer: cus_123), or
// the reference protocol's free metadata.
type StaticField struct {
	Pointer string // RFC 6901, e.g. /metadata/cart/sku
	Depth   int    // 1 for a top-level field
	Text    bool   // a string (else a number, boolean or null)
}

// StaticFields lists the template's static leaves in document order.
// key-reuse changes one of them to send a body that differs in a field
// the payment's values do not name.
func (b *Body) StaticFields() []StaticField {
	var out []StaticField
	var visit func(v any, ptr string, depth int)
	visit = func(v any, ptr string, depth int) {
		switch v := v.(type) {
		case *object:
			for _, m := range v.members {
				visit(m.value, ptr+"/"+escapePointer(m.key), depth+1)
			}
		case []any:
			for i, x := range v {
				visit(x, ptr+"/"+strconv.Itoa(i), depth+1)
			}
		case string:
			if !strings.Contains(v, "{{") {
				out = append(out, StaticField{Pointer: ptr, Depth: depth, Text: true})
			}
		default:
			out = append(out, StaticField{Pointer: ptr, Depth: depth})
		}
	}
	visit(b.root, "", 0)
	return out
}

// escapePointer encodes one RFC 6901 reference token.
func escapePointer(key string) string {
	return pointerEscaper.Replace(key)
}

// pointerEscaper escapes a JSON pointer's reference token (RFC 6901),
// built once: every request a run sends escapes its body's keys.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// edit changes the static leaf a pointer names in a rendered tree: a
// string gains "_b", a number grows by one, a boolean flips, a null
// becomes a string. It refuses a pointer to anything else.
func edit(root *object, pointer string) error {
	path, err := FieldPath(pointer)
	if err != nil {
		return err
	}
	var cur any = root
	for i, k := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case *object:
			v, ok := c.get(k)
			if !ok {
				return fmt.Errorf("edit %s: the body has no field %q", pointer, k)
			}
			if last {
				nv, err := changed(v)
				if err != nil {
					return fmt.Errorf("edit %s: %w", pointer, err)
				}
				c.put(k, nv)
				return nil
			}
			cur = v
		case []any:
			n, err := strconv.Atoi(k)
			if err != nil || n < 0 || n >= len(c) {
				return fmt.Errorf("edit %s: no item %q", pointer, k)
			}
			if last {
				nv, err := changed(c[n])
				if err != nil {
					return fmt.Errorf("edit %s: %w", pointer, err)
				}
				c[n] = nv
				return nil
			}
			cur = c[n]
		default:
			return fmt.Errorf("edit %s: %q is not inside an object or a list", pointer, k)
		}
	}
	return fmt.Errorf("edit %s: expected a pointer to a field", pointer)
}

// changed returns a different value of the same kind as v. A number
// grows by one, or is halved where one is below a double's precision
// (2^60, 1e17): a server compares JSON numbers as doubles (RFC 8785), and
// an edit it cannot see would send key-reuse an equal body as a
// different one.
func changed(v any) (any, error) {
	switch v := v.(type) {
	case string:
		return v + "_b", nil
	case bool:
		return !v, nil
	case nil:
		return "x", nil
	case staticNumber:
		switch n := v.v.(type) {
		case uint64:
			return staticNumber{grown(n)}, nil
		case int64:
			return staticNumber{grown(n)}, nil
		case int:
			return staticNumber{grown(n)}, nil
		case float64:
			return staticNumber{grown(n)}, nil
		}
	}
	return nil, fmt.Errorf("not a scalar field")
}

// grown is n+1, or n/2 when n+1 is the same double as n.
func grown[N uint64 | int64 | int | float64](n N) N {
	if float64(n+1) != float64(n) {
		return n + 1
	}
	return n / 2
}
