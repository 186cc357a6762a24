package certify

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/search"
)

// TestKeepHistories_EveryHistoryOneLine: with --keep-histories, each
// history an aggregate is handed goes to its family's file as one JSON
// line as it comes, and reads back as it was.
func TestKeepHistories_EveryHistoryOneLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kept")
	k, err := keepHistories(dir, "key-reuse")
	if err != nil {
		t.Fatal(err)
	}
	agg := &aggregate{disk: k}
	for seed := range uint64(3) {
		agg.add(search.Example{History: &history.History{Family: "key-reuse", Seed: seed, Complete: true,
			Ops: []history.Op{{Order: "ord_x", Key: "k"}}}})
	}
	agg.add(search.Example{}) // an example that made no history writes nothing
	if err := k.close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "key-reuse.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(gz)
	var seeds []uint64
	for dec.More() {
		var h history.History
		if err := dec.Decode(&h); err != nil {
			t.Fatal(err)
		}
		if len(h.Ops) != 1 || h.Ops[0].Order != "ord_x" {
			t.Errorf("history %d read back with ops %+v", h.Seed, h.Ops)
		}
		seeds = append(seeds, h.Seed)
	}
	if len(seeds) != 3 || seeds[0] != 0 || seeds[2] != 2 {
		t.Errorf("seeds read back %v, want 0 1 2", seeds)
	}
}

// TestKeepHistories_FolderNotWritable names the flag and the folder.
func TestKeepHistories_FolderNotWritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := keepHistories(file, "key-reuse")
	if err == nil || !strings.Contains(err.Error(), "--keep-histories") || !strings.Contains(err.Error(), file) {
		t.Errorf("error %v: want one naming --keep-histories and %s", err, file)
	}
}
