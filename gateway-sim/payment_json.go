package gatewaysim

import (
	"slices"
	"strings"
)

// Helpers the JSON dialects (Checkout.com, Adyen) share to read a payment
// request: its body is flattened into params as any body is (params.go),
// so a nested field is a path.

// field is the one param at exactly path.
func field(params []param, path ...string) (param, bool) {
	for _, p := range params {
		if slices.Equal(p.path, path) {
			return p, true
		}
	}
	return param{}, false
}

func fieldValue(params []param, path ...string) string {
	p, _ := field(params, path...)
	return p.value
}

// hashUnder is the string values one level below name (metadata).
func hashUnder(params []param, name string) map[string]string {
	out := map[string]string{}
	for _, p := range params {
		if len(p.path) == 2 && p.path[0] == name {
			out[p.path[1]] = p.value
		}
	}
	return out
}

// jsonAmount reads a positive integer amount in minor units; ok is false
// for a missing, fractional, non-numeric or out-of-range one.
func jsonAmount(p param, present bool) (int64, bool) {
	if !present || !p.number {
		return 0, false
	}
	n, ok := parseInteger(p)
	return n, ok && n > 0 && n <= maxAmount
}

// cardSource is the ledger's source for a card number ("card_" and its
// last four digits) and the decline a test card asks for; the declining
// test cards are Stripe's numbers in every dialect (declines.go).
func cardSource(number string) (string, *declineReason, bool) {
	digits := strings.ReplaceAll(number, " ", "")
	if len(digits) < 12 || len(digits) > 19 || strings.Trim(digits, "0123456789") != "" {
		return "", nil, false
	}
	return "card_" + digits[len(digits)-4:], declineCards[digits], true
}
