package families_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// TestKeyReuse_MutationsFollowTheRequestShape: against the reference
// protocol key-reuse changes each payment value and two fields of the
// free metadata, and writes JSON in three equal ways; against a form
// body with the order in the path it writes only parameter orders and
// changes the service's required field, never a field it does not have.
func TestKeyReuse_MutationsFollowTheRequestShape(t *testing.T) {
	def := testTarget(t, wideWindow)
	want := "different:amount different:currency different:order different:static different:nested equal:reordered equal:whitespace equal:exponent"
	if got := strings.Join(families.Mutations(def), " "); got != want {
		t.Errorf("reference protocol: %s\nwant %s", got, want)
	}
	own, err := target.Parse("own.yaml", []byte("name: own\nstart: {command: ./s}\npolicy: {ttl: 1s, retry_window: 30s, recovery_window: 2s, max_wait: 2s}\nprotocol:\n  path: /orders/{order_id}/payments\n  encoding: form\n  body: {amount: \"{{.Amount}}\", currency: \"{{.Currency}}\", customer: cus_123, payment_method: pm_card_visa}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want = "different:amount different:currency different:order different:static equal:reordered equal:rotated"
	if got := strings.Join(families.Mutations(own), " "); got != want {
		t.Errorf("own shape: %s\nwant %s", got, want)
	}
	seen := map[string]bool{}
	draw(t, "key-reuse", own, func(sc scenarios.Scenario) {
		var first *scenarios.Send
		for _, s := range sc.Steps {
			if s.Send == nil {
				continue
			}
			if first == nil {
				first = s.Send
				continue
			}
			seen[s.Send.Purpose] = true
			changed := 0
			for _, diff := range []bool{s.Send.Amount != first.Amount, s.Send.Currency != first.Currency, s.Send.Order != first.Order, s.Send.Edit != ""} {
				if diff {
					changed++
				}
			}
			if equal := strings.HasPrefix(s.Send.Purpose, "equal:"); equal != (changed == 0) || !equal && changed != 1 || s.Send.Key != first.Key {
				t.Fatalf("%s changes %d things: %v after %v", s.Send.Purpose, changed, s.Send, first)
			}
			if s.Send.Edit != "" && s.Send.Edit != "/customer" {
				t.Fatalf("edits %s", s.Send.Edit)
			}
		}
	})
	for _, m := range families.Mutations(own) {
		if !seen[m] {
			t.Errorf("never drew %s (drew %v)", m, slices.Sorted(maps.Keys(seen)))
		}
	}
}
