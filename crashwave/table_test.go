package crashwave_test

import (
	"testing"
	"time"

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
		if p.Choreography < crashwave.GatewayRule || p.Choreography > crashwave.KillAfterAnswer {
			t.Errorf("row %s: no choreography (%d)", p.Name, p.Choreography)
		}
		if store := p.Choreography == crashwave.StoreLink || p.Choreography == crashwave.StoreRestartInHold; store && p.Store == "" {
			t.Errorf("row %s: a store choreography without its store", p.Name)
		}
	}
}

// TestLongest_PinsTheWaves: the longest wave's strikes: 2.7s with keys
// in memory, 4s with PostgreSQL.
func TestLongest_PinsTheWaves(t *testing.T) {
	for _, c := range []struct {
		stores []string
		want   time.Duration
	}{{nil, 2700 * time.Millisecond}, {[]string{"postgres"}, 4 * time.Second}} {
		if got := crashwave.Longest(c.stores); got != c.want {
			t.Errorf("Longest(%v) = %s, want %s", c.stores, got, c.want)
		}
	}
}
