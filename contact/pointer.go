package contact

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"maps"
)

// pointerTo is the JSON pointer (RFC 6901) of the shallowest value in
// body that match accepts, or "" when there is none: where a success
// answer really keeps a field the target file points elsewhere for.
func pointerTo(body []byte, match func(any) bool) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return ""
	}
	type node struct {
		path string
		v    any
	}
	level := []node{{"", doc}}
	for len(level) > 0 {
		var next []node
		for _, n := range level {
			if n.path != "" && match(n.v) {
				return n.path
			}
			switch v := n.v.(type) {
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(v)) {
					next = append(next, node{n.path + "/" + escapePointer(k), v[k]})
				}
			}
		}
		level = next
	}
	return ""
}

func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// isText matches a string equal to one of want (a currency in any case).
func isText(want ...string) func(any) bool {
	return func(v any) bool {
		s, ok := v.(string)
		return ok && slices.ContainsFunc(want, func(w string) bool { return strings.EqualFold(s, w) })
	}
}

// isNumber matches a JSON number or a string with n's digits.
func isNumber(n string) func(any) bool {
	return func(v any) bool {
		switch v := v.(type) {
		case json.Number:
			return v.String() == n
		case string:
			return v == n
		}
		return false
	}
}
