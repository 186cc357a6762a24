package crashwave_test

import (
	"testing"

	"github.com/idemcheck/idemcheck/crashwave"
)

// TestTable_RowsAreWhole: every row names its point once, strikes with a
// kind, is played by a choreography, costs something, and a store
// choreography names its store.
func TestTable_RowsAreWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range crashwave.Table {
		if p.Name == "" || p.Kind == "" || p.Cost <= 0 || seen[p.Name] {
			t.Errorf("row %+v: want a name seen once, a kind and a cost", p)
		}
		seen[p.Name] = true
		if p.Choreography < crashwave.GatewayRule || p.Choreography > crashwave.ClientLinkInHold {
			t.Errorf("row %s: no choreography (%d)", p.Name, p.Choreography)
		}
		if store := p.Choreography == crashwave.StoreLink || p.Choreography == crashwave.StoreRestartInHold; store && p.Store == "" {
			t.Errorf("row %s: a store choreography without its store", p.Name)
		}
	}
}
