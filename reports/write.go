package reports

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/idemcheck/idemcheck/history"
)

// The file names WriteAll uses inside its directory.
const (
	JSONFile     = "report.json"
	JUnitFile    = "junit.xml"
	MarkdownFile = "summary.md"
	HTMLFile     = "index.html"
)

// Paths are the files WriteAll wrote. A field is empty when its file could
// not be written; the error WriteAll returned says why.
type Paths struct {
	Dir      string
	JSON     string
	JUnit    string
	Markdown string
	HTML     string
	// Histories maps a family to its counterexample's history file.
	Histories map[string]string
}

// HistoryFile is the name of a family's counterexample history beside
// report.json: "history-<family>.json".
func HistoryFile(family string) string { return "history-" + slug(family) + ".json" }

// WriteAll writes every report into dir, creating it: the counterexample
// histories first, then report.json (linking them by family, with paths
// relative to dir so the directory can be moved as a CI artifact),
// junit.xml, summary.md and index.html. One file failing does not stop the
// others, because a run that went wrong most needs its report; the errors
// are joined. Each file is written to a temporary name and renamed, so an
// interrupted write never leaves half a report. r itself is not modified.
func WriteAll(dir string, r *Report) (Paths, error) {
	if r == nil {
		return Paths{}, errors.New("write reports: nil report")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Paths{}, fmt.Errorf("write reports: %w", err)
	}
	p := Paths{Dir: dir, Histories: map[string]string{}}
	errs := writeHistories(dir, r, p.Histories)
	linked := linkHistories(r, p.Histories)
	if logs := collectLogs(dir); len(logs) > 0 {
		linked.Logs = logs
	}
	errs = append(errs, writeViolationHistories(dir, linked)...)
	for _, d := range documents(linked) {
		path := filepath.Join(dir, d.name)
		if err := writeFile(path, d.write); err != nil {
			errs = append(errs, err)
			continue
		}
		*d.field(&p) = path
	}
	return p, errors.Join(errs...)
}

// document is one report file and its writer.
type document struct {
	name  string
	write func(io.Writer) error
	field func(*Paths) *string
}

// documents lists the four report files in the order WriteAll writes them:
// the machine-readable ones first, in case a later one fails.
func documents(r *Report) []document {
	return []document{
		{JSONFile, func(w io.Writer) error { return WriteJSON(w, r) }, func(p *Paths) *string { return &p.JSON }},
		{JUnitFile, func(w io.Writer) error { return WriteJUnit(w, r) }, func(p *Paths) *string { return &p.JUnit }},
		{MarkdownFile, func(w io.Writer) error { return WriteMarkdown(w, r) }, func(p *Paths) *string { return &p.Markdown }},
		{HTMLFile, func(w io.Writer) error { return WriteHTML(w, r) }, func(p *Paths) *string { return &p.HTML }},
	}
}

// writeHistories writes each counterexample, in family order, recording
// the path of each one written in written.
func writeHistories(dir string, r *Report, written map[string]string) []error {
	var errs []error
	for _, fam := range counterexampleFamilies(r) {
		path := filepath.Join(dir, HistoryFile(fam))
		if err := writeFile(path, r.Counterexamples[fam].Write); err != nil {
			errs = append(errs, fmt.Errorf("family %s: %w", fam, err))
			continue
		}
		written[fam] = path
	}
	return errs
}

// counterexampleFamilies lists the families with a counterexample, sorted.
func counterexampleFamilies(r *Report) []string {
	var names []string
	for fam, h := range r.Counterexamples {
		if h != nil {
			names = append(names, fam)
		}
	}
	slices.Sort(names)
	return names
}

// linkHistories returns a copy of r whose families name the history files
// written for them, relative to the report directory.
func linkHistories(r *Report, written map[string]string) *Report {
	c := *r
	c.Families = slices.Clone(r.Families)
	for i, f := range c.Families {
		if path, ok := written[f.Name]; ok {
			c.Families[i].History = filepath.Base(path)
		}
	}
	return &c
}

// writeFile writes path atomically: into a temporary file in the same
// directory, renamed over path once complete.
func writeFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	bw := bufio.NewWriter(tmp)
	err = errors.Join(write(bw), bw.Flush(), tmp.Chmod(0o644), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ViolationHistoryFile is the name of the history of violation n
// (1-based) of family when it is not the family's counterexample:
// "history-<family>-v<n>.json".
func ViolationHistoryFile(family string, n int) string {
	return fmt.Sprintf("history-%s-v%d.json", slug(family), n)
}

// writeViolationHistories links every violation of r (a copy WriteAll
// owns) to its own history's file: the family's counterexample file when
// it is that history, else a file of its own, written once per history.
func writeViolationHistories(dir string, r *Report) []error {
	var errs []error
	r.Violations = slices.Clone(r.Violations)
	files := map[*history.History]string{}
	for fam, h := range r.Counterexamples {
		if f := family(r, fam); f != nil && f.History != "" {
			files[h] = f.History
		}
	}
	for i := range r.Violations {
		v := &r.Violations[i]
		if v.History == nil {
			continue
		}
		name, ok := files[v.History]
		if !ok {
			name = ViolationHistoryFile(v.Family, i+1)
			if err := writeFile(filepath.Join(dir, name), v.History.Write); err != nil {
				errs = append(errs, fmt.Errorf("violation %d: %w", i+1, err))
				continue
			}
			files[v.History] = name
		}
		v.HistoryFile = name
	}
	return errs
}
