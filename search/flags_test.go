package search

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/target"
)

// TestDraw_WhileAConfirmationSetsRapidsFlags draws examples while another
// family's confirmation sets rapid's flags: rapid's Example reads
// rapid.seed even when handed a seed, so without flagsMu the race
// detector fails this test (it failed gallery/gallerydoc's certification
// under -race), and a drawn example must not depend on the flag.
func TestDraw_WhileAConfirmationSetsRapidsFlags(t *testing.T) {
	tg := &target.Target{Name: "t", Start: target.Start{Command: "./srv"},
		Policy: target.Policy{TTL: time.Second, RetryWindow: 30 * time.Second, RecoveryWindow: 2 * time.Second, MaxWait: 2 * time.Second}}
	if err := tg.Validate(); err != nil {
		t.Fatal(err)
	}
	fam, err := families.FamilyByName("concurrent-duplicates")
	if err != nil {
		t.Fatal(err)
	}
	p := &Property{Family: fam, Target: tg, Replicas: 2}
	want := fmt.Sprint(Draw(p, 7))
	var wg sync.WaitGroup
	wg.Go(func() {
		for s := range uint64(50) {
			if err := setRapidFlags(time.Second, s+100); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 50 {
		if got := fmt.Sprint(Draw(p, 7)); got != want {
			t.Fatalf("seed 7 drew\n%s\nwhile rapid.seed changed, want\n%s", got, want)
		}
	}
	wg.Wait()
}
