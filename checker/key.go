package checker

import (
	"strings"

	"github.com/idemcheck/idemcheck/history"
)

// maxKeyLen is the longest key the protocol accepts (docs/protocol.md §1:
// 1 to 255 visible ASCII characters).
const maxKeyLen = 255

// serverKey returns the idempotency key a conforming server reads from op,
// and whether the header carried a valid one: present, 1..255 visible
// ASCII characters, either bare or as the draft's quoted sf-string ("k" and
// k are the same key). The checker partitions by this value, not by
// Op.Key, because it is what the server must deduplicate on.
//
// An empty KeyHeader with a non-empty Key is read as a recorder that did not
// record the header separately (hand-written histories); an empty header
// with an empty Key is an empty header sent on purpose, which is invalid.
func serverKey(op *history.Op) (string, bool) {
	if op.NoKey {
		return "", false
	}
	h := op.KeyHeader
	if h == "" {
		h = op.Key
	}
	if strings.HasPrefix(h, `"`) {
		var ok bool
		if h, ok = unquoteSF(h); !ok {
			return "", false
		}
	}
	return h, validKey(h)
}

// validKey: 1..255 characters, each visible ASCII (0x21..0x7E).
func validKey(k string) bool {
	if len(k) == 0 || len(k) > maxKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// unquoteSF decodes an RFC 8941 sf-string: DQUOTE, printable ASCII with
// only \" and \\ escaped, DQUOTE, nothing after.
func unquoteSF(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i == len(s)-1
		case c == '\\':
			i++
			if i >= len(s) || (s[i] != '"' && s[i] != '\\') {
				return "", false
			}
			b.WriteByte(s[i])
		case c < 0x20 || c > 0x7e:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return "", false // no closing quote
}
