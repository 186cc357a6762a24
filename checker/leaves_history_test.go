package checker_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
)

// The checker judges the history's own ops, reclassified outcomes and
// resolved charge ids held beside them: judging must leave the history
// as it was, byte for byte (a caller keeps it as evidence and judges it
// again).
func TestCheck_LeavesTheHistory(t *testing.T) {
	hs := []*history.History{generate(3000, 5)}
	files, _ := filepath.Glob("testdata/*.json")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var h history.History
		if json.Unmarshal(b, &h) == nil {
			hs = append(hs, &h)
		}
	}
	for _, h := range hs {
		before, _ := json.Marshal(h)
		checker.Check(h)
		if after, _ := json.Marshal(h); !bytes.Equal(before, after) {
			t.Errorf("judging %s seed %d changed its history", h.Target, h.Seed)
		}
	}
	if len(hs) < 10 {
		t.Fatalf("%d histories judged, want the generated one and the testdata", len(hs))
	}
}
