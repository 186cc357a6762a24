package checker

import (
	"encoding/json"

	"github.com/gowebpki/jcs"

	"github.com/idemcheck/idemcheck/history"
)

// canonicalizer turns request bodies into their RFC 8785 form, the only
// notion of payload equality the protocol has (docs/protocol.md §3: key
// order, whitespace and 100 vs 1e2 do not matter; strings compare
// exactly). Forms are cached by exact bytes: a run sends the same bytes
// many times.
type canonicalizer map[string]string

// of returns op's canonical body. A body that is not JSON compares by its
// exact bytes (it can only equal itself); an empty body, which only a
// hand-written history has, is rebuilt from Order, Amount and Currency.
func (c canonicalizer) of(op *history.Op) string {
	body := op.Body
	if body == "" {
		body = synthesize(op)
	}
	if s, ok := c[body]; ok {
		return s
	}
	s := canonical(body)
	c[body] = s
	return s
}

func canonical(body string) string {
	out, err := jcs.Transform([]byte(body))
	if err != nil {
		return "\x00raw:" + body
	}
	return string(out)
}

func synthesize(op *history.Op) string {
	b, _ := json.Marshal(map[string]any{
		"amount": op.Amount, "currency": op.Currency, "order_id": op.Order,
	})
	return string(b)
}
