// Command gallerydoc writes docs/gallery.md from the gallery's reports
// (one report folder per entry and seed, as `make gallery` leaves them:
// <reports>/<entry>/seed-<N>/report.json) and the hand-kept
// gallery/gallery.yaml (the entries and the findings that explain their
// checks, with the library's source lines). With -incidents it also keeps
// each entry's shrunk incident files under gallery/<entry>/incidents/.
// It fails when a FAILED or NON-STRICT check has no finding: a check no
// source line explains is a harness bug until proven otherwise.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/internal/yamlfile"
	"github.com/idemcheck/idemcheck/reports"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gallerydoc:", err)
		os.Exit(1)
	}
}

type flags struct {
	gallery, reports, out string
	incidents             bool
}

func run(args []string, stdout io.Writer) error {
	var f flags
	fs := flag.NewFlagSet("gallerydoc", flag.ContinueOnError)
	fs.StringVar(&f.gallery, "gallery", "gallery", "the gallery folder (gallery.yaml, one folder per entry)")
	fs.StringVar(&f.reports, "reports", "gallery-report", "the reports: <entry>/seed-<N>/report.json")
	fs.StringVar(&f.out, "out", "docs/gallery.md", "the page to write")
	fs.BoolVar(&f.incidents, "incidents", false, "copy each entry's shrunk incident files to <gallery>/<entry>/incidents/")
	if err := fs.Parse(args); err != nil {
		return err
	}
	g, err := LoadGallery(filepath.Join(f.gallery, "gallery.yaml"))
	if err != nil {
		return err
	}
	var rows []Row
	for _, e := range g.Entries {
		runs, err := loadRuns(filepath.Join(f.reports, e.Name))
		if err != nil {
			return err
		}
		if f.incidents {
			if err := keepIncidents(runs, filepath.Join(f.gallery, e.Name, "incidents")); err != nil {
				return err
			}
		}
		row := summarize(e, runs, filepath.ToSlash(filepath.Join(f.gallery, e.Name)))
		row.Checkout = checkout()
		rows = append(rows, row)
	}
	page, unexplained := Render(g, rows)
	if err := os.WriteFile(f.out, []byte(page), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d entries\n", f.out, len(rows))
	if len(unexplained) > 0 {
		return fmt.Errorf("no finding in gallery.yaml explains %s: find the source line, or the harness bug", strings.Join(unexplained, ", "))
	}
	return nil
}

// checkout names the commit of the working tree ("unknown" outside git).
func checkout() string {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// Gallery is gallery.yaml.
type Gallery struct {
	Entries  []Entry   `yaml:"entries"`
	Findings []Finding `yaml:"findings"`
	// Notes are paragraphs shown under the headline table: how stable the
	// verdicts were, what the machine was doing.
	Notes        []string `yaml:"notes"`
	HarnessFixes []string `yaml:"harness_fixes"`
}

// Entry is one certified configuration of one library.
type Entry struct {
	Name    string `yaml:"name"`
	Library string `yaml:"library"`
	Source  string `yaml:"source"` // the key of Finding.Source for its lines
	Version string `yaml:"version"`
	Storage string `yaml:"storage"`
}

// Finding is one mechanism, traced to the library's source.
type Finding struct {
	ID        string              `yaml:"id"`
	Title     string              `yaml:"title"`
	Origin    string              `yaml:"origin"` // one of origins
	Mechanism string              `yaml:"mechanism"`
	Fix       string              `yaml:"fix"`
	Entries   []string            `yaml:"entries"`
	Checks    []string            `yaml:"checks"`
	Source    map[string][]string `yaml:"source"`
	Incidents []string            `yaml:"incidents"`
}

// origins are where a finding comes from: the library whatever it is
// configured with, a configuration a user can change, or the boundary
// band where idemcheck leaves a check undecided by design.
var origins = []string{"library", "configuration", "boundary"}

// LoadGallery reads and checks gallery.yaml: every finding names entries
// that exist, an origin, and source lines for each library it applies to.
func LoadGallery(path string) (*Gallery, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var g Gallery
	bad := errors.New("invalid gallery file")
	if err := yamlfile.Decode(path, data, &g, bad); err != nil {
		return nil, err
	}
	source := map[string]string{}
	for _, e := range g.Entries {
		source[e.Name] = e.Source
	}
	for i, f := range g.Findings {
		if !slices.Contains(origins, f.Origin) {
			return nil, fmt.Errorf("%s: findings[%d] (%s): origin: expected one of %v, got %q", path, i, f.ID, origins, f.Origin)
		}
		for _, name := range f.Entries {
			src, ok := source[name]
			if !ok {
				return nil, fmt.Errorf("%s: findings[%d] (%s): entry %q is not in entries", path, i, f.ID, name)
			}
			if len(f.Source[src]) == 0 {
				return nil, fmt.Errorf("%s: findings[%d] (%s): no source lines for %s (entry %s)", path, i, f.ID, src, name)
			}
		}
	}
	return &g, nil
}

// loadRuns reads every seed's report of one entry, in seed order.
func loadRuns(dir string) ([]*reports.Report, error) {
	dirs, _ := filepath.Glob(filepath.Join(dir, "seed-*"))
	var runs []*reports.Report
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(d, reports.JSONFile))
		if err != nil {
			return nil, err
		}
		rep, err := reports.ReadJSON(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		runs = append(runs, rep)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: no seed-*/report.json (run make gallery)", dir)
	}
	slices.SortFunc(runs, func(a, b *reports.Report) int { return int(a.Seed) - int(b.Seed) })
	return runs, nil
}

// keepIncidents replaces dir's incident files with the first run's that
// has one per family (the lowest seed that failed the family).
func keepIncidents(runs []*reports.Report, dir string) error {
	old, _ := filepath.Glob(filepath.Join(dir, "incident-*.yaml"))
	for _, f := range old {
		os.Remove(f)
	}
	kept := map[string]bool{}
	for _, rep := range runs {
		for _, fr := range rep.Families {
			if fr.Incident == "" || kept[fr.Name] {
				continue
			}
			data, err := os.ReadFile(fr.Incident)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "incident-"+fr.Name+".yaml"), data, 0o644); err != nil {
				return err
			}
			kept[fr.Name] = true
		}
	}
	return nil
}

// Row is one entry's results over its seeds.
type Row struct {
	Entry Entry
	Dir   string // gallery/<entry>
	// Checkout is the commit of the checkout that made the page, shown
	// when a run's binary carries no commit (built outside a git clone).
	Checkout string
	Runs     []*reports.Report
	Checks   []CheckRow
	Verdict  map[string]int // verdict word -> seeds
	Level    map[string]int // level -> seeds
}

// CheckRow is one check that did not pass in some seed of an entry.
type CheckRow struct {
	ID, Name, Verdict string // the worst verdict over the seeds
	Seeds             []uint64
	Families          []string
	// FamilyVerdict is each family's worst verdict of this check; the
	// page names it beside a family whose verdict differs from the row's.
	FamilyVerdict map[string]string
}

func summarize(e Entry, runs []*reports.Report, dir string) Row {
	r := Row{Entry: e, Dir: dir, Runs: runs, Verdict: map[string]int{}, Level: map[string]int{}}
	byID := map[string]*CheckRow{}
	for _, rep := range runs {
		r.Verdict[verdictWord(rep.Verdict)]++
		r.Level[rep.Level]++
		for _, c := range rep.Checks {
			if c.Verdict == "PASS" || !c.Exercised && c.Verdict != "UNKNOWN" {
				continue
			}
			cr := byID[c.ID]
			if cr == nil {
				cr = &CheckRow{ID: c.ID, Name: c.Name, Verdict: c.Verdict, FamilyVerdict: map[string]string{}}
				byID[c.ID] = cr
			}
			if rank(c.Verdict) > rank(cr.Verdict) {
				cr.Verdict = c.Verdict
			}
			if !slices.Contains(cr.Seeds, rep.Seed) {
				cr.Seeds = append(cr.Seeds, rep.Seed)
			}
			if !slices.Contains(cr.Families, c.Family) {
				cr.Families = append(cr.Families, c.Family)
			}
			if v, ok := cr.FamilyVerdict[c.Family]; !ok || rank(c.Verdict) > rank(v) {
				cr.FamilyVerdict[c.Family] = c.Verdict
			}
		}
	}
	for _, cr := range byID {
		slices.Sort(cr.Families)
		r.Checks = append(r.Checks, *cr)
	}
	slices.SortFunc(r.Checks, func(a, b CheckRow) int {
		return cmp.Or(rank(b.Verdict)-rank(a.Verdict), checkOrder(a.ID)-checkOrder(b.ID))
	})
	return r
}

// verdictWord spells a report's verdict as the CLI prints it.
func verdictWord(v string) string {
	switch v {
	case "fail":
		return "FAILED"
	case "pass":
		return "PASS"
	}
	return strings.ToUpper(v)
}

// rank orders verdicts from best to worst, as the checker does.
func rank(v string) int { return checker.Verdict(v).Rank() }

// checkOrder is a check's place in the checker's report order, money
// checks first; a check this build does not know comes last.
func checkOrder(id string) int {
	ids := checker.CheckIDs()
	if i := slices.Index(ids, id); i >= 0 {
		return i
	}
	return len(ids)
}

// explains returns the findings that explain check id in the entry.
func (g *Gallery) explains(entry, id string) []Finding {
	var out []Finding
	for _, f := range g.Findings {
		if slices.Contains(f.Entries, entry) && slices.Contains(f.Checks, id) {
			out = append(out, f)
		}
	}
	return out
}

func seedList(s []uint64) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.FormatUint(v, 10)
	}
	return strings.Join(parts, " ")
}
