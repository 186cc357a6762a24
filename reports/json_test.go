package reports_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
)

func TestJSON_RoundTrip(t *testing.T) {
	want := sampleReport()
	var b bytes.Buffer
	if err := reports.WriteJSON(&b, want); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"duration": "58.412s"`) {
		t.Errorf("duration not written as a Go duration string:\n%s", b.String()[:400])
	}
	got, err := reports.ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	want.Counterexamples = nil // not part of report.json
	if got.Seal == nil || got.Seal.Digest == "" {
		t.Errorf("report.json carries no seal")
	}
	got.Seal = nil // WriteJSON's (seal_test.go)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("round trip differs:\ngot  %s\nwant %s", g, w)
	}
}

func TestJSON_EmptyListsAreArrays(t *testing.T) {
	var b bytes.Buffer
	if err := reports.WriteJSON(&b, &reports.Report{Target: "x"}); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"families": []`, `"checks": []`, `"violations": []`, `"environment": {}`, `"schema_version": 1`} {
		if !strings.Contains(b.String(), field) {
			t.Errorf("report.json lacks %s:\n%s", field, b.String())
		}
	}
}

func TestJSON_RefusesUnknownSchema(t *testing.T) {
	for name, doc := range map[string]string{
		"newer":   `{"schema_version": 2, "target": "x"}`,
		"missing": `{"target": "x"}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := reports.ReadJSON(strings.NewReader(doc))
			if !errors.Is(err, reports.ErrSchemaVersion) {
				t.Fatalf("ReadJSON(%s) = %v, want ErrSchemaVersion", doc, err)
			}
		})
	}
	if _, err := reports.ReadJSON(strings.NewReader("not json")); err == nil {
		t.Fatal("ReadJSON accepted garbage")
	}
}

func TestJSON_IgnoresAddedFields(t *testing.T) {
	r, err := reports.ReadJSON(strings.NewReader(`{"schema_version": 1, "target": "x", "added_later": true}`))
	if err != nil || r.Target != "x" {
		t.Fatalf("ReadJSON = %v, %v", r, err)
	}
}

func TestReadDir_LoadsHistories(t *testing.T) {
	dir := t.TempDir()
	if _, err := reports.WriteAll(dir, sampleReport()); err != nil {
		t.Fatal(err)
	}
	r, err := reports.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Families[3].History; got != "history-crash-window.json" {
		t.Errorf("crash-window links %q", got)
	}
	if h := r.Counterexamples["crash-window"]; h == nil || len(h.Charges) != 4 {
		t.Errorf("crash-window counterexample not loaded: %+v", h)
	}
	if h := r.Counterexamples["protocol"]; h != nil {
		t.Error("protocol has no counterexample but got one")
	}
}

// A broken report.json is refused with the file and the line (or, for
// the schema, the field) that is wrong, as `idemcheck merge` shows it.
func TestParseJSON_ErrorsNameFileLine(t *testing.T) {
	for in, want := range map[string]string{
		"{\"schema_version\": 1,\n \"target\": \"x\",\n \"budget\": \"soon\"}":                   `s/report.json:3: time: invalid duration "soon"`,
		"{\"schema_version\": 1,\n \"families\": [\n  {\"name\": \"f\", \"scenarios\": \"9\"}]}": "s/report.json:3: families.scenarios: expected int, got string",
		"{\"schema_version\": 1,\n \"target\": \"x\n\"}":                                         `s/report.json:2: invalid character '\n' in string literal`,
		"{\"schema_version\": 1,\n \"started\": \"noon\"}":                                       `s/report.json:2: parsing time "noon"`,
		"{\"schema_version\": 1,\n\n \"budget\": \"5 Minuten\u00e4\"}":                           `s/report.json:3: time: unknown unit`,
		`{"schema_version": 7}`: "s/report.json: schema_version: unknown report schema_version: 7",
	} {
		_, err := reports.ParseJSON("s/report.json", []byte(in))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant prefix %q", in, err, want)
		}
	}
}
