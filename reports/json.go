package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/idemcheck/idemcheck/history"
)

// ErrSchemaVersion is returned by ReadJSON for a report.json written with
// a schema this build does not know: guessing at the meaning of someone
// else's fields could turn their FAILED into our PASS.
var ErrSchemaVersion = errors.New("unknown report schema_version")

// WriteJSON writes r as report.json: indented, with the schema version of
// this build, and empty lists as [] rather than null so that tooling can
// iterate without nil checks. HTML escaping is off so that "->" in fault
// targets reads as written.
//
// It is sealed (Seal): a digest of its canonical form, and of each
// field's, that idemcheck verify recomputes.
func WriteJSON(w io.Writer, r *Report) error {
	b, err := sealedJSON(normalize(r))
	if err == nil {
		_, err = w.Write(b)
	}
	if err != nil {
		return fmt.Errorf("write report.json: %w", err)
	}
	return nil
}

// normalize returns a shallow copy of r as it is written: stamped with
// SchemaVersion, notes condensed (CondenseNote), nil lists and maps made
// empty.
func normalize(r *Report) *Report {
	c := *condensed(r)
	c.SchemaVersion = SchemaVersion
	if c.Families == nil {
		c.Families = []FamilyResult{}
	}
	if c.Checks == nil {
		c.Checks = []Check{}
	}
	if c.Violations == nil {
		c.Violations = []Violation{}
	}
	if c.Env == nil {
		c.Env = map[string]string{}
	}
	return &c
}

// ReadJSON decodes a report.json. It reads schema_version before anything
// else and refuses a version it does not know (ErrSchemaVersion), also a
// missing one. Fields it does not know are ignored: adding a field does not
// change the meaning of the others, so it does not bump the version.
// Counterexample histories are not in report.json; ReadDir loads them.
func ReadJSON(r io.Reader) (*Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", JSONFile, err)
	}
	return ParseJSON(JSONFile, data)
}

// ParseJSON is ReadJSON for a file already read. Every error begins with
// name (the file's path) and then the line of the fault, or the field
// (schema_version): "shard-2/report.json:14: families.scenarios: expected
// int, got string".
func ParseJSON(name string, data []byte) (*Report, error) {
	var probe struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, locateJSON(name, data, err)
	}
	if probe.SchemaVersion == nil {
		return nil, fmt.Errorf("%s: schema_version: %w: none, not an idemcheck report", name, ErrSchemaVersion)
	}
	if *probe.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version: %w: %d, this build reads %d", name, ErrSchemaVersion, *probe.SchemaVersion, SchemaVersion)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, locateJSON(name, data, err)
	}
	return &rep, nil
}

// ReadDir loads the report WriteAll wrote into dir: report.json and the
// counterexample histories its families link to (FamilyResult.History,
// relative to dir), so that the HTML can be redrawn or shard reports merged
// without rerunning anything. Errors name the file.
func ReadDir(dir string) (*Report, error) {
	path := filepath.Join(dir, JSONFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rep, err := ParseJSON(path, data)
	if err != nil {
		return nil, err
	}
	rep.Counterexamples = map[string]*history.History{}
	for _, fam := range rep.Families {
		if err := loadHistory(dir, rep, fam); err != nil {
			return nil, err
		}
	}
	return rep, loadViolationHistories(dir, rep)
}

// loadViolationHistories reads the history each violation links to, each
// file once, so violations of one example share one *History.
func loadViolationHistories(dir string, rep *Report) error {
	loaded := map[string]*history.History{}
	for _, f := range rep.Families {
		if h := rep.Counterexamples[f.Name]; h != nil {
			loaded[f.History] = h
		}
	}
	for i := range rep.Violations {
		v := &rep.Violations[i]
		if v.HistoryFile == "" {
			continue
		}
		if h, ok := loaded[v.HistoryFile]; ok {
			v.History = h
			continue
		}
		path := v.HistoryFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		h, err := history.ReadFile(path)
		if err != nil {
			return fmt.Errorf("violation %d: %w", i+1, err)
		}
		loaded[v.HistoryFile], v.History = h, h
	}
	return nil
}

// loadHistory reads fam's linked counterexample, if it has one.
func loadHistory(dir string, rep *Report, fam FamilyResult) error {
	if fam.History == "" {
		return nil
	}
	path := fam.History
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	h, err := history.ReadFile(path)
	if err != nil {
		return fmt.Errorf("family %s: %w", fam.Name, err)
	}
	rep.Counterexamples[fam.Name] = h
	return nil
}
