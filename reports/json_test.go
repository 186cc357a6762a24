package reports_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/history"
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

func TestWriteAll_WritesEveryFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	r := sampleReport()
	p, err := reports.WriteAll(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{p.JSON, p.JUnit, p.Markdown, p.HTML, p.Histories["crash-window"], p.Histories["key-reuse"]} {
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("%q: %v (size %v)", path, err, fi)
		}
	}
	if got := filepath.Base(p.Histories["crash-window"]); got != "history-crash-window.json" {
		t.Errorf("history file = %s", got)
	}
	if h, err := history.ReadFile(p.Histories["crash-window"]); err != nil || len(h.Ops) != 6 {
		t.Errorf("history does not read back: %v", err)
	}
	if r.Families[3].History != "" {
		t.Error("WriteAll modified the caller's report")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 6 {
		t.Errorf("dir holds %d entries, want 6 (no temporary files left)", len(entries))
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

func TestWriteAll_NilReport(t *testing.T) {
	if _, err := reports.WriteAll(t.TempDir(), nil); err == nil {
		t.Fatal("WriteAll(nil) succeeded")
	}
}
