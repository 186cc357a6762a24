package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/idemcheck/idemcheck/builtin"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/scenarios"
)

// listing is the `list --json` document, for tooling.
type listing struct {
	Targets   []listTarget   `json:"targets"`
	Families  []listFamily   `json:"families"`
	Incidents []listIncident `json:"incidents"`
}

type listTarget struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Bug     string   `json:"bug"`
	Expect  []string `json:"expect"`
	Verdict string   `json:"verdict,omitempty"` // how Expect shows: FAILED or NON-STRICT
	Family  string   `json:"family,omitempty"`  // the family that finds the bug
}

type listFamily struct {
	Name  string `json:"name"`
	Level string `json:"level"`
	Doc   string `json:"doc"`
}

type listIncident struct {
	File   string   `json:"file"`
	Name   string   `json:"name"`
	Target string   `json:"target"`
	Expect []string `json:"expect"`
	// Public marks the catalogue of public incidents; Source is the
	// thread that reported it (owner/repo#N), Also related threads.
	Public bool     `json:"public"`
	Source string   `json:"source,omitempty"`
	Also   []string `json:"also,omitempty"`
}

func runList(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", "list [--json]", "idemcheck list --json | jq '.targets[].name'", stderr)
	asJSON := fs.Bool("json", false, "print the listing as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l, err := buildListing()
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, l)
	}
	printListing(stdout, l)
	return nil
}

// printJSON writes a command's --json document, indented for people who
// read it before their tooling does.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func buildListing() (listing, error) {
	var l listing
	for _, m := range builtin.Members {
		expect := m.Expect
		if expect == nil {
			expect = []string{}
		}
		l.Targets = append(l.Targets, listTarget{Name: m.Name, Kind: m.Kind, Bug: m.Bug, Expect: expect, Verdict: m.Verdict, Family: m.Family})
	}
	for _, f := range families.Families {
		l.Families = append(l.Families, listFamily{Name: f.Name, Level: f.Level, Doc: f.Doc})
	}
	incs, err := scenarios.Incidents()
	if err != nil {
		return l, err
	}
	for _, in := range incs {
		var exp []string
		for _, e := range in.Scenario.Expect {
			exp = append(exp, e.Check+" "+e.Verdict)
		}
		l.Incidents = append(l.Incidents, listIncident{File: in.Path(), Name: in.Scenario.Name, Target: in.Scenario.Target, Expect: exp,
			Public: in.Public, Source: in.Scenario.Source, Also: in.Scenario.Also})
	}
	return l, nil
}

// targetSections are the listing's target groups, by Member.Kind.
var targetSections = []struct{ kind, title string }{
	{"reference", "Targets:"},
	{"broken", "\nZoo (broken servers; each must FAIL as shown):"},
	{"garden", "\nGarden (correct servers that choose differently; must never FAIL):"},
}

func printListing(w io.Writer, l listing) {
	for _, sec := range targetSections {
		fmt.Fprintln(w, sec.title)
		for _, t := range l.Targets {
			if t.Kind != sec.kind {
				continue
			}
			exp := ""
			switch {
			case len(t.Expect) > 0:
				exp = fmt.Sprintf(" [%s: %s %s]", t.Family, strings.Join(t.Expect, " or "), t.Verdict)
			case t.Family != "":
				exp = fmt.Sprintf(" [%s: PASS or NON-STRICT]", t.Family)
			}
			fmt.Fprintf(w, "  %-26s %-9s %s%s\n", t.Name, t.Kind, t.Bug, exp)
		}
	}
	fmt.Fprintln(w, "\nFamilies:")
	for _, f := range l.Families {
		fmt.Fprintf(w, "  %-22s %s  %s\n", f.Name, f.Level, f.Doc)
	}
	fmt.Fprintln(w, "\nIncidents (our own):")
	for _, in := range l.Incidents {
		if !in.Public {
			fmt.Fprintf(w, "  %-52s %s, expect %s\n", in.File, in.Target, strings.Join(in.Expect, ", "))
		}
	}
	fmt.Fprintln(w, "\nPublic incidents (docs/incidents.md; each from the thread it names):")
	for _, in := range l.Incidents {
		if in.Public {
			fmt.Fprintf(w, "  %-44s %-18s expect %-10s %s\n", in.Source, in.Target, strings.Join(in.Expect, ", "), in.File)
		}
	}
}
