package scenarios

import (
	"cmp"
	"embed"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/internal/yamlfile"
)

// incidentFS holds the regression table: our own incident files, one per
// bug class that has caused a real incident, and the public catalogue
// (incidents/public/), one per bug a real implementation shipped and a
// public thread reported. Each replays with one command.
//
//go:embed incidents/*.yaml incidents/public/*.yaml
var incidentFS embed.FS

// IncidentDir is where the table lives in the repository; an Incident's
// File is relative to it.
const IncidentDir = "scenarios/incidents"

// Incident is one entry of the regression table.
type Incident struct {
	File string // path inside its directory: "crash-after-charge.yaml", "public/22-raw-json-fingerprint.yaml"
	// Public is true for the catalogue of public incidents (a file under
	// public/, which cites its Source), false for our own.
	Public   bool
	Scenario *Scenario
	// Mechanism is the comment at the top of the file, in one paragraph:
	// the mechanism in our own words.
	Mechanism string
}

// Path is the incident file's path in the repository.
func (in Incident) Path() string { return IncidentDir + "/" + in.File }

// Incidents loads the built-in regression table, own incidents first,
// then the public ones, each sorted by file name. Every entry names a
// built-in member as its target.
func Incidents() ([]Incident, error) {
	return loadTable(incidentFS, "incidents", "scenarios/incidents", true)
}

// LoadIncidentDir loads every incident file (*.yaml, *.yml) under dir and
// its subfolders, ordered as Incidents orders them; a file in a folder
// named public is a public incident. With members set, every file's
// target must name a built-in member (they replay against their own);
// an error names the file:line.
func LoadIncidentDir(dir string, members bool) ([]Incident, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, &yamlfile.FieldError{File: dir, Msg: "expected a directory of incident files: " + err.Error(), Kind: ErrInvalid}
	}
	return loadTable(os.DirFS(dir), ".", strings.TrimSuffix(dir, "/"), members)
}

// loadTable reads the incident files under root in fsys, naming each in
// errors as shown/<path below root>.
func loadTable(fsys fs.FS, root, shown string, members bool) ([]Incident, error) {
	var out []Incident
	err := fs.WalkDir(fsys, root, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			return err
		}
		file := strings.TrimPrefix(strings.TrimPrefix(name, root), "/")
		in, err := loadIncident(fsys, name, path.Join(shown, file), members)
		in.File = file
		out = append(out, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Incident) int {
		if a.Public != b.Public {
			return map[bool]int{true: 1, false: -1}[a.Public]
		}
		return cmp.Compare(a.File, b.File)
	})
	return out, nil
}

func loadIncident(fsys fs.FS, name, shown string, members bool) (Incident, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return Incident{}, err
	}
	sc, err := ParseIncident(shown, data)
	if err != nil {
		return Incident{}, err
	}
	if members {
		if _, err := sc.Member(); err != nil {
			return Incident{}, err
		}
	}
	return Incident{Public: path.Base(path.Dir(shown)) == "public", Scenario: sc, Mechanism: leadingComment(data)}, nil
}

// leadingComment is the file's first comment block, its lines joined.
func leadingComment(data []byte) string {
	var words []string
	for _, line := range strings.Split(string(data), "\n") {
		text, ok := strings.CutPrefix(strings.TrimSpace(line), "#")
		if !ok {
			break
		}
		words = append(words, strings.TrimSpace(text))
	}
	return strings.Join(words, " ")
}
