package target

import (
	"fmt"
	"strings"
)

// FieldPath parses a protocol field mapping: an RFC 6901 JSON pointer
// ("/metadata/order_id", with ~1 for "/" and ~0 for "~" inside a name), or
// a bare name, which is the top-level field of that name ("order_id" is
// "/order_id"). It returns the object keys to follow, outermost first. A
// Stripe-shaped server keeps the order under metadata; a pointer maps it
// without a code change.
func FieldPath(s string) ([]string, error) {
	if s == "" {
		return nil, fmt.Errorf("expected a field name or a JSON pointer such as /metadata/order_id, got an empty string")
	}
	if !strings.HasPrefix(s, "/") {
		return []string{s}, nil
	}
	parts := strings.Split(s[1:], "/")
	for i, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("JSON pointer %q: empty name in segment %d", s, i+1)
		}
		u, err := unescapePointer(p)
		if err != nil {
			return nil, fmt.Errorf("JSON pointer %q: %v", s, err)
		}
		parts[i] = u
	}
	return parts, nil
}

// unescapePointer decodes ~1 and ~0 in one reference token (RFC 6901 §4).
func unescapePointer(tok string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] != '~' {
			b.WriteByte(tok[i])
			continue
		}
		if i+1 == len(tok) || (tok[i+1] != '0' && tok[i+1] != '1') {
			return "", fmt.Errorf("%q: '~' must be followed by 0 or 1", tok)
		}
		b.WriteByte("~/"[tok[i+1]-'0'])
		i++
	}
	return b.String(), nil
}

// checkFields validates every protocol.fields mapping.
func (t *Target) checkFields() error {
	f := t.Protocol.Fields
	for _, m := range []struct{ field, value string }{
		{"protocol.fields.amount", f.Amount}, {"protocol.fields.currency", f.Currency},
		{"protocol.fields.order_id", f.OrderID}, {"protocol.fields.id", f.ID}, {"protocol.fields.status", f.Status},
	} {
		if _, err := FieldPath(m.value); err != nil {
			return bad(m.field, "%v", err)
		}
	}
	return nil
}
