package reports_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
)

// sealed is the sample report as WriteJSON writes it.
func sealed(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := reports.WriteJSON(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A report verifies as written, also re-indented; one byte of a verdict
// changed is named, and a report without its seal is refused.
func TestSeal_VerifyNamesTheEditedField(t *testing.T) {
	data := sealed(t)
	if _, err := reports.Verify("report.json", data); err != nil {
		t.Fatalf("fresh report: %v", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		t.Fatal(err)
	}
	if _, err := reports.Verify("report.json", compact.Bytes()); err != nil {
		t.Fatalf("the same report without indentation: %v", err)
	}
	for _, c := range []struct{ from, to, field string }{
		{`"verdict": "fail"`, `"verdict": "faiL"`, "verdict"},
		{`"verdict": "FAILED"`, `"verdict": "FAILEd"`, "families[3] (name crash-window)"},
		{`"seed": 7`, `"seed": 8`, "seed"},
	} {
		if !bytes.Contains(data, []byte(c.from)) {
			t.Fatalf("the sample report has no %s", c.from)
		}
		edited := bytes.Replace(data, []byte(c.from), []byte(c.to), 1)
		v, err := reports.Verify("report.json", edited)
		if !errors.Is(err, reports.ErrEdited) || len(v.Edited) != 1 || !strings.HasPrefix(v.Edited[0], c.field) {
			t.Errorf("%s -> %s: %v (edited %q), want ErrEdited naming %s", c.from, c.to, err, v.Edited, c.field)
		}
	}
	var doc map[string]any
	_ = json.Unmarshal(data, &doc)
	delete(doc, "seal")
	bare, _ := json.Marshal(doc)
	if _, err := reports.Verify("report.json", bare); !errors.Is(err, reports.ErrNoSeal) {
		t.Errorf("without a seal: %v, want ErrNoSeal", err)
	}
	if _, err := reports.Verify("report.json", []byte("{")); err == nil || errors.Is(err, reports.ErrEdited) {
		t.Errorf("not JSON: %v", err)
	}
}

// Read back and written again, a report keeps its digest.
func TestSeal_RoundTripKeepsTheDigest(t *testing.T) {
	data := sealed(t)
	rep, err := reports.ParseJSON("report.json", data)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := reports.WriteJSON(&again, rep); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), data) {
		t.Fatalf("written again differs:\n%s\nwas\n%s", again.Bytes(), data)
	}
}
