package reports_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/idemcheck/idemcheck/internal/fuzzcheck"
	"github.com/idemcheck/idemcheck/reports"
)

// FuzzParseJSON feeds arbitrary bytes to the report.json reader that
// `idemcheck merge` runs on every shard's report. A parse returns a report
// or an error naming the file and a line or field, within
// fuzzcheck.Timeout, never a panic. A report it accepts round-trips
// (written and read back, it is written the same), merges with itself
// without error, and draws into every report file merge writes (JUnit,
// Markdown, HTML) without a panic. Seeds: the report of the test fixture
// (sampleReport) and a few broken ones; the corpus is kept in
// testdata/fuzz/FuzzParseJSON.
func FuzzParseJSON(f *testing.F) {
	var fixture bytes.Buffer
	if err := reports.WriteJSON(&fixture, sampleReport()); err != nil {
		f.Fatal(err)
	}
	f.Add(fixture.Bytes())
	for _, s := range []string{
		`{"schema_version": 1, "target": "x"}`,
		`{"schema_version": 2, "target": "x"}`,
		"{\"schema_version\": 1,\n \"budget\": \"soon\"}",
		"{\"schema_version\": 1,\n \"families\": [{\"name\": \"f\", \"scenarios\": \"many\"}]}",
		`{"schema_version": 1, "level": "L9", "verdict": "maybe", "checks": [{"id": "M1", "verdict": "GREAT"}], "families": [{"name": "a", "history": "../../etc/passwd"}]}`,
	} {
		f.Add([]byte(s))
	}
	const name = "shard-1/report.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzcheck.MaxInput {
			t.Skip("larger than any report.json")
		}
		defer fuzzcheck.Watchdog(data)()
		rep, err := fuzzcheck.Parse(t, name, data, reports.ParseJSON)
		if err != nil {
			fuzzcheck.NamesPlace(t, err, name, data, nil, "schema_version")
			return
		}
		written := writeJSON(t, rep)
		back, err := reports.ParseJSON(name, written)
		if err != nil {
			t.Fatalf("a written report does not read back: %v\n%s", err, written)
		}
		if again := writeJSON(t, back); !bytes.Equal(again, written) {
			t.Fatalf("round trip changed the report:\n%s\n%s", written, again)
		}
		merged, err := reports.Merge(rep, back)
		if err != nil {
			t.Fatalf("a report does not merge with itself: %v", err)
		}
		for _, write := range []func(io.Writer, *reports.Report) error{reports.WriteJSON, reports.WriteJUnit, reports.WriteMarkdown, reports.WriteHTML} {
			_ = write(io.Discard, merged) // an error is an answer; a panic is the bug
		}
	})
}

func writeJSON(t *testing.T, r *reports.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := reports.WriteJSON(&b, r); err != nil {
		t.Fatalf("an accepted report does not write: %v", err)
	}
	return b.Bytes()
}
