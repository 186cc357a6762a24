package openapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// entry is one member of a body template, in the order written.
type entry struct {
	key     string
	value   any // object, []any, place, or a value from the document
	comment string
}

// object is a mapping of the body template, its members in order.
type object []entry

// place is a placeholder leaf, {{.Amount}}: written quoted.
type place string

// guessNote marks a value init made up for a required field.
const guessNote = "guessed: the document gives no example, enum or default"

// bodyBuilder writes a body template from a request schema: the
// properties the roles chose get their placeholders, every other
// required property a value from the document.
type bodyBuilder struct {
	places  map[string]place // dotted path → placeholder
	guessed []string         // dotted paths of made-up values
}

// object builds the members of an object schema at path.
func (b *bodyBuilder) object(ref *openapi3.SchemaRef, ptr string, path []string, example any) object {
	o := object{}
	if len(path) >= maxDepth {
		return o
	}
	ex, _ := example.(map[string]any)
	for _, m := range members(ref, ptr) {
		if m.ref == nil || m.ref.Value == nil {
			continue
		}
		full := append(slices.Clip(path), m.name)
		d := strings.Join(full, ".")
		switch {
		case b.places[d] != "":
			o = append(o, entry{key: m.name, value: b.places[d]})
		case b.leadsToPlace(d):
			o = append(o, entry{key: m.name, value: b.object(m.ref, m.ptr, full, ex[m.name])})
		case m.required && !m.ref.Value.ReadOnly:
			v, guessed := b.value(m.ref, m.ptr, full, ex[m.name])
			e := entry{key: m.name, value: v}
			if guessed {
				e.comment = guessNote
				b.guessed = append(b.guessed, d)
			}
			o = append(o, e)
		}
	}
	return o
}

// leadsToPlace says whether a placeholder lies below the dotted path.
func (b *bodyBuilder) leadsToPlace(d string) bool {
	for k := range b.places {
		if strings.HasPrefix(k, d+".") {
			return true
		}
	}
	return false
}

// value is a required property's value: its example, first enum value
// or default (or the example its parent gives for it); an object is
// built from its own required properties; anything else is guessed from
// its type and format, and reported so.
func (b *bodyBuilder) value(ref *openapi3.SchemaRef, ptr string, path []string, parentEx any) (any, bool) {
	s := ref.Value
	switch {
	case len(path) > maxDepth: // a list of lists of itself
		return nil, true
	case s.Example != nil:
		return s.Example, false
	case len(s.Examples) > 0:
		return s.Examples[0], false
	case len(s.Enum) > 0:
		return s.Enum[0], false
	case s.Default != nil:
		return s.Default, false
	case parentEx != nil:
		return parentEx, false
	case is(s, "object") || len(s.Properties) > 0 || len(s.AllOf) > 0:
		return b.object(ref, ptr, path, nil), false
	case is(s, "array"):
		if s.Items == nil || s.Items.Value == nil {
			return []any{}, true
		}
		v, guessed := b.value(s.Items, pointer(ptr, "items"), append(slices.Clip(path), "0"), nil)
		return []any{v}, guessed
	case is(s, "integer"), is(s, "number"):
		if s.Min != nil {
			return *s.Min, true
		}
		return 1, true
	case is(s, "boolean"):
		return false, true
	}
	if v, ok := formatSamples[s.Format]; ok {
		return v, true
	}
	return "x", true
}

// formatSamples are values of common string formats.
var formatSamples = map[string]string{
	"uuid": "00000000-0000-4000-8000-000000000000", "email": "customer@example.com",
	"date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01", "uri": "https://example.com/", "url": "https://example.com/",
}

// writeObject writes a body template's members as block YAML.
func writeObject(w *strings.Builder, o object, indent int) {
	pad := strings.Repeat(" ", indent)
	for _, e := range o {
		w.WriteString(pad + yamlKey(e.key) + ":")
		if sub, ok := e.value.(object); ok && len(sub) > 0 {
			w.WriteString(comment(e.comment) + "\n")
			writeObject(w, sub, indent+2)
			continue
		}
		w.WriteString(" " + flow(e.value) + comment(e.comment) + "\n")
	}
}

func comment(c string) string {
	if c == "" {
		return ""
	}
	return "  # " + c
}

var plainRE = regexp.MustCompile(`^(\.{1,2}/|[A-Za-z_/])([A-Za-z0-9_./ -]*[A-Za-z0-9_./-])?$`)

// yamlKey writes a mapping key, quoted unless it is a plain name YAML
// reads as that string.
func yamlKey(k string) string { return scalar(k) }

// scalar writes a string plain when YAML reads it back as that string
// (cus_123, /metadata/order_id), else quoted.
func scalar(s string) string {
	switch strings.ToLower(s) {
	case "null", "true", "false", "yes", "no", "on", "off", "y", "n":
		return strconv.Quote(s)
	}
	if plainRE.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// flow writes a value in YAML's flow style: strings quoted, mappings in
// braces with their keys sorted (the document's order is lost for
// examples), lists in brackets.
func flow(v any) string {
	switch v := v.(type) {
	case place:
		return strconv.Quote(string(v))
	case string:
		return scalar(v)
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		return v.String()
	case int, int64, uint64, int32, uint32:
		return fmt.Sprint(v)
	case object:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = yamlKey(e.key) + ": " + flow(e.value)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			parts = append(parts, yamlKey(k)+": "+flow(v[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = flow(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return strconv.Quote(fmt.Sprint(v))
}
