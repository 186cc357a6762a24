package scenarios_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/scenarios"
)

// TestCatalogue_DocUpToDate: docs/incidents.md is what the incident files
// say. IDEMCHECK_UPDATE_DOCS=1 rewrites it.
func TestCatalogue_DocUpToDate(t *testing.T) {
	incs, err := scenarios.Incidents()
	if err != nil {
		t.Fatal(err)
	}
	want := scenarios.Catalogue(incs)
	doc := filepath.Join("..", scenarios.CatalogueDoc)
	if os.Getenv("IDEMCHECK_UPDATE_DOCS") != "" {
		if err := os.WriteFile(doc, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date with scenarios/incidents/public/: run IDEMCHECK_UPDATE_DOCS=1 go test ./scenarios/ -run Catalogue", scenarios.CatalogueDoc)
	}
}

// TestCatalogue_EveryPublicIncidentShown: each public incident appears
// with its thread, mechanism, member and replay command, and is counted.
func TestCatalogue_EveryPublicIncidentShown(t *testing.T) {
	incs, err := scenarios.Incidents()
	if err != nil {
		t.Fatal(err)
	}
	doc := string(scenarios.Catalogue(incs))
	public := 0
	for _, in := range incs {
		if !in.Public {
			if strings.Contains(doc, in.File) {
				t.Errorf("own incident %s in the public catalogue", in.File)
			}
			continue
		}
		public++
		if in.Mechanism == "" {
			t.Errorf("%s: no comment at the top stating the mechanism", in.File)
		}
		for _, want := range []string{"### " + in.Scenario.Name, in.Scenario.Source, in.Mechanism, "`idemcheck replay " + in.Path() + "`"} {
			if !strings.Contains(doc, want) {
				t.Errorf("%s: the catalogue lacks %q", in.File, want)
			}
		}
	}
	if !strings.Contains(doc, "| **all** | **"+itoa(public)+"** |") {
		t.Errorf("the counts do not total %d public incidents", public)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestClassOf: a file's class wins over its family's.
func TestClassOf(t *testing.T) {
	for _, c := range []struct{ class, family, want string }{
		{"", "concurrent-duplicates", "claim-race"},
		{"", "crash-window", "charge-window"},
		{"", "tenants", "identity"},
		{"identity", "concurrent-duplicates", "identity"},
	} {
		if got := scenarios.ClassOf(&scenarios.Scenario{Class: c.class, Family: c.family}).ID; got != c.want {
			t.Errorf("%+v: %s", c, got)
		}
	}
}
