package scenarios

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/builtin"
	"github.com/idemcheck/idemcheck/checker"
)

// Class is one of the catalogue's classes of incident, the way a payments
// engineer sorts them: what the server got wrong.
type Class struct {
	ID    string
	Title string
	// Families are the scenario families whose incidents fall in the
	// class unless an incident file says otherwise (class:).
	Families []string
}

// Classes are the catalogue's classes, in the order docs/incidents.md
// shows them; the last one takes every family the others do not name.
var Classes = []Class{
	{ID: "claim-race", Title: "Concurrent duplicates and claim races", Families: []string{"concurrent-duplicates"}},
	{ID: "charge-window", Title: "Crash or failure inside the charge window", Families: []string{"crash-window"}},
	{ID: "identity", Title: "Errors, identity, tenants, expiry, keys sent to the gateway"},
}

func classIDs() []string {
	ids := make([]string, len(Classes))
	for i, c := range Classes {
		ids[i] = c.ID
	}
	return ids
}

// ClassOf is the class of an incident: the one its file names, else the
// one its family falls in.
func ClassOf(sc *Scenario) Class {
	for _, c := range Classes {
		if c.ID == sc.Class || sc.Class == "" && slices.Contains(c.Families, sc.Family) {
			return c
		}
	}
	return Classes[len(Classes)-1]
}

// CatalogueDoc is where the catalogue for users lives in the repository.
const CatalogueDoc = "docs/incidents.md"

// Catalogue renders docs/incidents.md from the public incidents: counts
// per class, a table, then per incident its thread, mechanism (the
// comment at the top of its file), invariants, member and replay command.
func Catalogue(incs []Incident) []byte {
	var pub []Incident
	for _, in := range incs {
		if in.Public {
			pub = append(pub, in)
		}
	}
	var b bytes.Buffer
	b.WriteString(catalogueIntro)
	fmt.Fprintf(&b, "| class | incidents |\n|---|---|\n")
	for _, c := range Classes {
		fmt.Fprintf(&b, "| %s | %d |\n", c.Title, len(inClass(pub, c)))
	}
	fmt.Fprintf(&b, "| **all** | **%d** |\n", len(pub))
	for _, c := range Classes {
		writeClass(&b, c, inClass(pub, c))
	}
	return b.Bytes()
}

const catalogueIntro = `# Public incidents: the regression catalogue

Bugs that real idempotency implementations shipped, each reported in a
public GitHub thread, each written down as an incident file under
` + "`scenarios/incidents/public/`" + ` that replays it against a built-in zoo member
with exactly that mechanism. Every one reproduces against its member and
passes against the reference (` + "`go test ./certify/ -run Incidents`" + `,
` + "`make regression`" + `). The mechanism lines are ours, written after reading
each thread; the thread is the source.

Replay the whole catalogue, our own incidents included, against your
server, one verdict per incident and a summary:

    idemcheck replay --all scenarios/incidents/ --target ./my-target.yaml

Without ` + "`--target`" + ` every incident replays against its own member and the
summary says how many reproduced (exit codes: README.md, "Exit codes").
This file is generated from the incident files: after adding one, run
` + "`IDEMCHECK_UPDATE_DOCS=1 go test ./scenarios/ -run Catalogue`" + `.

`

func inClass(incs []Incident, c Class) []Incident {
	var out []Incident
	for _, in := range incs {
		if ClassOf(in.Scenario).ID == c.ID {
			out = append(out, in)
		}
	}
	return out
}

func writeClass(b *bytes.Buffer, c Class, incs []Incident) {
	fmt.Fprintf(b, "\n## %s\n\n", c.Title)
	if len(incs) == 0 {
		b.WriteString("None yet.\n")
		return
	}
	b.WriteString("| thread | incident | zoo member | invariant |\n|---|---|---|---|\n")
	for _, in := range incs {
		fmt.Fprintf(b, "| %s | [%s](#%s) | `%s` | %s |\n", threadLink(in.Scenario.Source), in.Scenario.Name, in.Scenario.Name, in.Scenario.Target, expectations(in.Scenario, false))
	}
	for _, in := range incs {
		writeIncident(b, in)
	}
}

func writeIncident(b *bytes.Buffer, in Incident) {
	sc := in.Scenario
	fmt.Fprintf(b, "\n### %s\n\n", sc.Name)
	fmt.Fprintf(b, "- **Thread:** %s", threadLink(sc.Source))
	if len(sc.Also) > 0 {
		links := make([]string, len(sc.Also))
		for i, a := range sc.Also {
			links[i] = threadLink(a)
		}
		fmt.Fprintf(b, " (also %s)", strings.Join(links, ", "))
	}
	fmt.Fprintf(b, "\n- **Mechanism:** %s\n", in.Mechanism)
	fmt.Fprintf(b, "- **Invariant:** %s\n", expectations(sc, true))
	member := "`" + sc.Target + "`"
	if m, err := builtin.Lookup(sc.Target); err == nil {
		member += ": " + m.Bug
	}
	fmt.Fprintf(b, "- **Zoo member:** %s\n", member)
	fmt.Fprintf(b, "- **Replay:** `idemcheck replay %s` (against your server: add `--target ./my-target.yaml`)\n", in.Path())
}

// threadLink links owner/repo#N to its GitHub thread (GitHub sends an
// issue number that is a pull request on to the pull request).
func threadLink(src string) string {
	repo, n, ok := strings.Cut(src, "#")
	if !ok {
		return src
	}
	return fmt.Sprintf("[%s](https://github.com/%s/issues/%s)", src, repo, n)
}

func expectations(sc *Scenario, names bool) string {
	var parts []string
	for _, e := range sc.Expect {
		s := e.Check + " " + e.Verdict
		if names {
			s = fmt.Sprintf("%s %s (%s)", e.Check, e.Verdict, checker.CheckName(e.Check))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
