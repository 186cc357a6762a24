package builtin_test

import (
	"fmt"
	"testing"

	"github.com/idemcheck/idemcheck/builtin"
	"github.com/idemcheck/idemcheck/families"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// TestProviders_NeverFailElsewhere certifies the members whose verdict is
// about a payment provider under the other profiles: a zoo member that is
// wrong on one provider only (its row's Provider) fails nothing under the
// others, and a garden member whose choice is about providers
// (EveryProvider) fails nothing under any. Under a profile without
// idempotency (none) a family that crashes servers is not judged: it is
// reported so, and concurrent-duplicates, which is judged there, is
// certified beside it. Seeds as the zoo's (see seeds).
func TestProviders_NeverFailElsewhere(t *testing.T) {
	dir := withBinaries(t)
	ss := seeds(t)
	var b table
	b.printf("\n%-18s %-9s %-5s %-8s %s\n", "member", "provider", "seed", "verdict", "checks")
	t.Run("members", func(t *testing.T) {
		for _, m := range builtin.Members {
			if (m.Kind != "broken" || m.Provider == "") && !m.EveryProvider {
				continue
			}
			for _, p := range gatewaysim.ProviderNames() {
				if p == m.Provider || (m.Provider == "" && p == gatewaysim.ProviderStripe) {
					continue // its own row: the zoo's or the garden's test
				}
				under := m
				under.Provider = p
				fams := []string{m.Family}
				if fam, _ := families.FamilyByName(m.Family); fam.Crashes && p == gatewaysim.ProviderNone {
					fams = append(fams, "concurrent-duplicates")
				}
				for _, seed := range ss {
					t.Run(fmt.Sprintf("%s/%s/seed=%d", m.Name, p, seed), func(t *testing.T) {
						together(t, ss)
						verdict, got := certifyNeverFails(t, under, dir, seed, fams...)
						b.printf("%-18s %-9s %-5d %-8s %s\n", m.Name, p, seed, verdict, got)
					})
				}
			}
		}
	}) // returns when every run has ended
	t.Log(b.String())
}
