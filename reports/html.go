package reports

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
)

// maxDrawnViolations caps the timelines on one page; a counterexample is
// shrunk, so more than this many violations repeat one story.
const maxDrawnViolations = 40

//go:embed templates/*.tmpl
var templateFS embed.FS

// templates are the page and the timeline SVG, parsed once; a broken
// template fails every test of the package at init.
var templates = template.Must(template.New("reports").Funcs(template.FuncMap{
	"px":  px,
	"mid": func(y, h float64) float64 { return y + h/2 },
	"sub": func(a, b float64) float64 { return a - b },
}).ParseFS(templateFS, "templates/*.tmpl"))

// px prints a coordinate to a tenth of a pixel.
func px(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// WriteHTML writes index.html: one self-contained page (inline CSS, inline
// SVG, no script, no network) with the verdict and level badges, a banner
// when the run is incomplete, the families table, the checks table graded
// as Autobahn grades (a column per family, a coloured cell per check),
// the coverage, and for every violation its timeline drawing, the history
// table of the events drawn, the counterexample's steps and the command
// that replays it. It is a pure function of r: the same report renders
// byte for byte the same page.
func WriteHTML(w io.Writer, r *Report) error {
	page, err := buildPage(condensed(r))
	if err != nil {
		return fmt.Errorf("write index.html: %w", err)
	}
	if err := templates.ExecuteTemplate(w, "index", page); err != nil {
		return fmt.Errorf("write index.html: %w", err)
	}
	return nil
}

// pageView is everything index.html prints.
type pageView struct {
	R            *Report
	Verdict      string
	VerdictClass string
	LevelName    string
	Started      string
	Budget       string
	Duration     string
	Summary      string
	Env          [][2]string
	Coverage     [][2]string
	Families     []familyView
	Matrix       matrixView
	Violations   []violationView
	Hidden       int
}

// familyView is one row of the families table.
type familyView struct {
	FamilyResult
	Class    string
	Duration string
}

// buildPage computes the page's view of r.
func buildPage(r *Report) (*pageView, error) {
	p := &pageView{R: r, Verdict: VerdictWord(r.Verdict), VerdictClass: verdictClass(r.Verdict),
		LevelName: checker.LevelName(r.Level), Budget: time.Duration(r.Budget).String(),
		Duration: time.Duration(r.Duration).Round(time.Millisecond).String(), Summary: gradeSummary(r),
		Env: envRows(r), Coverage: coverageRows(r), Matrix: buildMatrix(r)}
	if !r.Started.IsZero() {
		p.Started = r.Started.UTC().Format("2006-01-02 15:04:05 MST")
	}
	for _, f := range r.Families {
		p.Families = append(p.Families, familyView{FamilyResult: f, Class: gradeClass(f.Grade()),
			Duration: time.Duration(f.Duration).Round(time.Millisecond).String()})
	}
	var err error
	p.Violations, p.Hidden, err = buildViolations(r)
	return p, err
}

// gradeSummary counts the checks by grade: "84 checks: 70 PASS, 1 FAILED, ...".
func gradeSummary(r *Report) string {
	counts := map[string]int{}
	for _, c := range r.Checks {
		counts[c.Grade()]++
	}
	var parts []string
	for _, g := range []string{"FAILED", "UNKNOWN", "NON-STRICT", "INFORMATIONAL", "PASS", "not exercised"} {
		if counts[g] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[g], g))
		}
	}
	return fmt.Sprintf("%d checks: %s", len(r.Checks), strings.Join(parts, ", "))
}

// pairs lists a map's entries sorted by key, for stable output.
func pairs(m map[string]string) [][2]string {
	var out [][2]string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, [2]string{k, m[k]})
	}
	return out
}

// envRows is the environment table: the idemcheck build first, then the
// versions the run recorded.
func envRows(r *Report) [][2]string {
	return append([][2]string{{"idemcheck", r.Tool.String()}}, pairs(r.Env)...)
}

// coverageRows is the coverage table, what each count means in words.
func coverageRows(r *Report) [][2]string {
	c := r.Coverage
	rows := [][2]string{
		{"histories (incomplete)", fmt.Sprintf("%d (%d)", c.Histories, c.Incomplete)},
		{"requests", fmt.Sprint(c.Ops)},
		{"keys / orders / tenants", fmt.Sprintf("%d / %d / %d", c.Keys, c.Orders, c.Tenants)},
		{"sequential retries", fmt.Sprint(c.SequentialRetries)},
		{"concurrent duplicates", fmt.Sprint(c.ConcurrentDuplicates)},
		{"keys shared across tenants", fmt.Sprint(c.CrossTenantKeys)},
		{"mutated / equivalent bodies", fmt.Sprintf("%d / %d", c.MutatedBodies, c.EquivalentBodies)},
		{"faults / crash-class faults fired / crashed keys judged", fmt.Sprintf("%d / %d / %d", c.Faults, c.CrashFaults, c.CrashJudged)},
		{"expiry probes / late retries / at the promise's edge", fmt.Sprintf("%d / %d / %d", c.ExpiryProbes, c.LateRetries, c.EdgeRetries)},
	}
	for _, p := range checker.CrashPoints {
		rows = append(rows, [2]string{"crash point " + p, crashPointCell(c.CrashPoints[p])})
	}
	if len(c.FaultKinds) > 0 {
		rows = append(rows, [2]string{"faults by kind", kindsCell(c.FaultKinds)})
	}
	if c.MaxSkew > 0 {
		rows = append(rows, [2]string{"largest replica clock skew measured", c.MaxSkew.Round(time.Millisecond).String()})
	}
	return rows
}

// kindsCell lists fault kinds with their counts, by name.
func kindsCell(kinds map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	return strings.Join(parts, ", ")
}

// crashPointCell renders how often a crash point was reached; L4 needs
// every one at least once.
func crashPointCell(n int) string {
	if n == 0 {
		return "never reached"
	}
	return fmt.Sprint(n)
}

// matrixView is the Autobahn-style checks table: a row per check, a column
// per family.
type matrixView struct {
	Families []string
	Rows     []matrixRow
}

type matrixRow struct {
	ID, Name, Level string
	Cells           []matrixCell
}

// matrixCell is one check in one family; Present is false when the family
// did not run the check at all.
type matrixCell struct {
	Present                    bool
	Grade, Class, Note, Anchor string
	Violations                 int
}

// buildMatrix lays the checks out by ID (in report order) and family.
func buildMatrix(r *Report) matrixView {
	m := matrixView{Families: familyNames(r)}
	for _, id := range checkIDs(r) {
		row := matrixRow{ID: id, Name: checkName(r, "", id)}
		for _, fam := range m.Families {
			row.Cells = append(row.Cells, matrixCellOf(r, fam, id, &row))
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// matrixCellOf grades check id of family fam, linking to its first
// violation.
func matrixCellOf(r *Report, fam, id string, row *matrixRow) matrixCell {
	for _, c := range r.Checks {
		if c.Family != fam || c.ID != id {
			continue
		}
		row.Level = c.Level
		cell := matrixCell{Present: true, Grade: c.Grade(), Class: gradeClass(c.Grade()), Note: c.Note,
			Violations: len(violationsOf(r, fam, id))}
		if n := firstViolation(r, fam, id); n > 0 {
			cell.Anchor = fmt.Sprintf("#violation-%d", n)
		}
		return cell
	}
	return matrixCell{}
}

// checkIDs lists check IDs in order of first appearance.
func checkIDs(r *Report) []string {
	var ids []string
	for _, c := range r.Checks {
		if !slices.Contains(ids, c.ID) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// firstViolation is the 1-based number of the first violation of check id
// in family fam, or 0 when it has none drawn.
func firstViolation(r *Report, fam, id string) int {
	for i, v := range r.Violations {
		if i >= maxDrawnViolations {
			break
		}
		if v.Family == fam && v.Invariant == id {
			return i + 1
		}
	}
	return 0
}

// paramsText prints fault parameters sorted by name: "latency=800ms".
// faultParams is a fault's parameters as text, naming the example that
// injected it when another one did (history.Fault.Foreign).
func faultParams(f history.Fault) string {
	s := paramsText(f.Params)
	if f.Foreign != "" {
		s = strings.TrimSpace(s + " foreign=" + f.Foreign)
	}
	return s
}

func paramsText(p map[string]string) string {
	var parts []string
	for _, kv := range pairs(p) {
		parts = append(parts, kv[0]+"="+kv[1])
	}
	return strings.Join(parts, " ")
}

// historyOf returns the history v was found in: its own, else its
// family's counterexample when v is one of that counterexample's own
// violations (no Source: certify tags every violation of another example
// with "family seed=N"), else nil: another example's history is never
// drawn under v.
func historyOf(r *Report, v Violation) *history.History {
	if v.History != nil {
		return v.History
	}
	if r.Counterexamples == nil || v.Source != "" {
		return nil
	}
	return r.Counterexamples[v.Family]
}
