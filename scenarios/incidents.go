package scenarios

import (
	"embed"
	"io/fs"
	"path"
	"sort"
)

// incidentFS holds the regression table: one incident file per bug class
// that has caused a real incident, each replayable with one command.
//
//go:embed incidents/*.yaml
var incidentFS embed.FS

// Incident is one entry of the regression table.
type Incident struct {
	File     string // name inside incidents/
	Scenario *Scenario
}

// Incidents loads the built-in regression table, sorted by file name.
func Incidents() ([]Incident, error) {
	names, err := fs.Glob(incidentFS, "incidents/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Incident
	for _, n := range names {
		data, err := incidentFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		sc, err := ParseIncident("scenarios/"+n, data)
		if err != nil {
			return nil, err
		}
		out = append(out, Incident{File: path.Base(n), Scenario: sc})
	}
	return out, nil
}
