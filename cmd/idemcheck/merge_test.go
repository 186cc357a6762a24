package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A shard whose report.json is broken is refused with exit 2, naming the
// file and the line.
func TestCLI_MergeBrokenReportNamesFileLine(t *testing.T) {
	shard := t.TempDir()
	os.WriteFile(filepath.Join(shard, "report.json"), []byte("{\"schema_version\": 1,\n \"target\": \"x\",\n \"budget\": \"soon\"}\n"), 0o644)
	code, _, stderr := runCLI(t, "merge", "--report-dir", t.TempDir(), shard)
	want := filepath.Join(shard, "report.json") + `:3: time: invalid duration "soon"`
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
}
