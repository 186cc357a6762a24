package checker_test

import (
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/checker"
)

// A double charge under one gateway key says what the provider's profile
// did: Checkout.com, which keeps only a 2xx result, paid the re-send
// again after a 5xx; the same history on a provider that keeps every
// result would only be explained by the key's lifetime.
func TestProviderProfile_M1SaysWhatTheProviderKept(t *testing.T) {
	h := load(t, "testdata/m1_checkout_resent_after_5xx.json")
	m1 := explanations(checker.Check(h), "M1")
	for _, want := range []string{`gateway key "req_k1"`, "(checkout) still held", "only when it answered 2xx", "the payments of the order's reference"} {
		if !strings.Contains(m1, want) {
			t.Errorf("M1 explanation %q lacks %q", m1, want)
		}
	}
	h.Gateway.KeepsOnlySuccess, h.Gateway.Provider = false, ""
	if m1 := explanations(checker.Check(h), "M1"); strings.Contains(m1, "2xx") || !strings.Contains(m1, "the provider forgot it") {
		t.Errorf("on a provider that keeps every result: %q", m1)
	}
}
