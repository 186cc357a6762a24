package scenarios

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
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
	File string // path inside IncidentDir: "crash-after-charge.yaml", "public/22-raw-json-fingerprint.yaml"
	// Public is true for the catalogue of public incidents (File under
	// public/, the scenario's Source set), false for our own.
	Public   bool
	Scenario *Scenario
}

// Path is the incident file's path in the repository.
func (in Incident) Path() string { return IncidentDir + "/" + in.File }

// Incidents loads the built-in regression table, own incidents first,
// then the public ones, each sorted by file name. Every entry names a
// built-in member as its target.
func Incidents() ([]Incident, error) {
	var out []Incident
	for _, glob := range []string{"incidents/*.yaml", "incidents/public/*.yaml"} {
		names, err := fs.Glob(incidentFS, glob)
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
		for _, n := range names {
			in, err := loadEmbedded(n)
			if err != nil {
				return nil, err
			}
			out = append(out, in)
		}
	}
	return out, nil
}

func loadEmbedded(name string) (Incident, error) {
	data, err := incidentFS.ReadFile(name)
	if err != nil {
		return Incident{}, err
	}
	sc, err := ParseIncident("scenarios/"+name, data)
	if err != nil {
		return Incident{}, err
	}
	if _, err := sc.Member(); err != nil {
		return Incident{}, err
	}
	file := strings.TrimPrefix(name, "incidents/")
	return Incident{File: file, Public: path.Dir(file) == "public", Scenario: sc}, nil
}
