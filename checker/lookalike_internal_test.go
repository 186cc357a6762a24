package checker

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/idemcheck/idemcheck/history"
)

// TestLookAlikes_CountingIsListing: counting look-alike pairs gives what
// listing every pair and testing it gives, on random groups of orders
// that share keys and charges.
func TestLookAlikes_CountingIsListing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 300 {
		var group []*order
		for i := range rng.IntN(12) {
			o := &order{id: fmt.Sprint("o", i), ops: []*opInfo{{key: fmt.Sprint("k", rng.IntN(4))}}}
			for range rng.IntN(3) {
				status := []string{"succeeded", "failed"}[rng.IntN(2)]
				o.charges = append(o.charges, &charge{Charge: history.Charge{ID: fmt.Sprint("ch", rng.IntN(5)), Status: status}})
			}
			group = append(group, o)
		}
		var wantPairs, wantCharged int
		for i, a := range group {
			for _, b := range group[i+1:] {
				if a.ops[0].key == b.ops[0].key {
					continue
				}
				wantPairs++
				ca, cb := a.succeeded(), b.succeeded()
				if len(ca) == 1 && len(cb) == 1 && ca[0].ID != cb[0].ID {
					wantCharged++
				}
			}
		}
		if p, c := countPairs(group); p != wantPairs || c != wantCharged {
			t.Fatalf("counted %d pairs, %d charged; listing gives %d, %d", p, c, wantPairs, wantCharged)
		}
	}
}
