package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/target"
)

// entryTargets loads every gallery/<entry>/target.yaml.
func entryTargets(t *testing.T) map[string]*target.Target {
	t.Helper()
	files, _ := filepath.Glob("../*/target.yaml")
	out := map[string]*target.Target{}
	for _, f := range files {
		tg, err := target.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(filepath.Dir(f))] = tg
	}
	return out
}

// TestGallery_EveryEntryLoads: every entry folder's target file loads, is
// named after its folder and is listed in gallery.yaml, and gallery.yaml
// lists no entry without one, the reference first; every finding names
// entries that exist and source lines for their library.
func TestGallery_EveryEntryLoads(t *testing.T) {
	g, err := LoadGallery("../gallery.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tgs := entryTargets(t)
	var listed []string
	for _, e := range g.Entries {
		listed = append(listed, e.Name)
		tg, ok := tgs[e.Name]
		switch {
		case !ok:
			t.Errorf("gallery.yaml lists %s, which has no gallery/%s/target.yaml", e.Name, e.Name)
		case tg.Name != e.Name:
			t.Errorf("gallery/%s/target.yaml is named %q, not after its folder", e.Name, tg.Name)
		case tg.Install == nil:
			t.Errorf("gallery/%s/target.yaml has no install step: a fresh clone could not certify it with one command", e.Name)
		}
	}
	for name := range tgs {
		if !slices.Contains(listed, name) {
			t.Errorf("gallery/%s/target.yaml is not listed in gallery.yaml", name)
		}
	}
	if len(listed) < 5 || listed[0] != "reference" {
		t.Errorf("entries %v: want the reference first and the four Fiber entries", listed)
	}
}

// TestGallery_UnexplainedChecksFailThePage: a FAILED check that no
// finding explains is marked on the page and returned, so make gallery
// fails; an explained one names its finding and the incident's replay.
func TestGallery_UnexplainedChecksFailThePage(t *testing.T) {
	g := &Gallery{
		Entries:  []Entry{{Name: "lib-memory", Library: "lib", Source: "lib", Version: "v1", Storage: "memory"}},
		Findings: []Finding{{ID: "F1", Title: "per process", Origin: "configuration", Entries: []string{"lib-memory"}, Checks: []string{"M1"}, Source: map[string][]string{"lib": {"lib@v1/store.go:12"}}}},
	}
	rep := func(seed uint64, checks ...reports.Check) *reports.Report {
		return &reports.Report{Seed: seed, Verdict: "fail", Level: "L0", Checks: checks,
			Families: []reports.FamilyResult{{Name: "concurrent-duplicates", Incident: "x.yaml"}}}
	}
	m1 := reports.Check{ID: "M1", Name: "no double charge", Family: "concurrent-duplicates", Verdict: "FAILED", Exercised: true}
	p1 := reports.Check{ID: "P1", Name: "different payload refused", Family: "key-reuse", Verdict: "FAILED", Exercised: true}
	row := summarize(g.Entries[0], []*reports.Report{rep(1, m1, p1), rep(2, m1)}, "gallery/lib-memory")
	page, unexplained := Render(g, []Row{row})
	if !slices.Equal(unexplained, []string{"lib-memory/P1"}) {
		t.Errorf("unexplained %v, want [lib-memory/P1]", unexplained)
	}
	for _, want := range []string{
		"| M1 no double charge | FAILED | 2/2 (1 2) | concurrent-duplicates | [F1](#f1) per process: `lib@v1/store.go:12` |",
		"| P1 different payload refused | FAILED | 1/2 (1) | key-reuse | **unexplained** |",
		"- concurrent-duplicates: `./bin/idemcheck replay gallery/lib-memory/incidents/incident-concurrent-duplicates.yaml --target gallery/lib-memory/target.yaml`",
		"`lib@v1/store.go:12`",
		"FAILED (2/2)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
}

// TestGallery_GlueBuildsAndFiberV2MemoryFails builds every entry (its
// install step) and certifies fiber-v2-memory at seed 1 on the two
// families whose finding (F4: the stored answer is replayed whatever the
// request) does not depend on timing: a different body gets the first
// answer (P1) and tenant B gets tenant A's charge (M5). A change that
// breaks the gallery's glue, its target files or idemcheck's handling of
// them fails here; the full gallery is make gallery.
func TestGallery_GlueBuildsAndFiberV2MemoryFails(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the glue and starts replicas")
	}
	tgs := entryTargets(t)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute) // a cold module cache downloads Fiber, fasthttp and go-redis
	defer cancel()
	for name, tg := range tgs {
		if err := process.Install(ctx, tg, io.Discard); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	tg := tgs["fiber-v2-memory"]
	if _, err := os.Stat(tg.Start.Command); err != nil {
		t.Fatalf("the install step did not build %s: %v", tg.Start.Command, err)
	}
	rep, err := certify.Run(ctx, tg, certify.Options{Families: families.MustSelect("key-reuse", "tenants"), Seed: 1, Budget: 40 * time.Second})
	if err != nil {
		t.Fatalf("certify fiber-v2-memory: %v", err)
	}
	if rep.Verdict != "fail" {
		t.Errorf("verdict %q, want fail", rep.Verdict)
	}
	for _, want := range []struct{ family, id string }{{"key-reuse", "P1"}, {"tenants", "M5"}} {
		i := slices.IndexFunc(rep.Checks, func(c reports.Check) bool { return c.Family == want.family && c.ID == want.id })
		if i < 0 || rep.Checks[i].Verdict != "FAILED" {
			t.Errorf("%s in %s: want FAILED (F4), got %+v", want.id, want.family, rep.Checks)
		}
	}
}

// TestGallery_ChecksWorstFirstInReportOrder: an entry's checks are listed
// worst verdict first, then in the checker's report order, each with the
// worst verdict over the seeds and every family's own worst verdict.
func TestGallery_ChecksWorstFirstInReportOrder(t *testing.T) {
	check := func(id, family, verdict string) reports.Check {
		return reports.Check{ID: id, Family: family, Verdict: verdict, Exercised: true}
	}
	runs := []*reports.Report{
		{Seed: 1, Checks: []reports.Check{check("R4", "a", "INFORMATIONAL"), check("R1", "a", "NON-STRICT"), check("E1", "a", "NON-STRICT"), check("M1", "b", "NON-STRICT")}},
		{Seed: 2, Checks: []reports.Check{check("M1", "a", "FAILED"), check("M2", "a", "PASS")}},
	}
	r := summarize(Entry{Name: "lib"}, runs, "gallery/lib")
	var got []string
	for _, c := range r.Checks {
		got = append(got, c.ID+" "+c.Verdict)
	}
	if want := []string{"M1 FAILED", "R1 NON-STRICT", "E1 NON-STRICT", "R4 INFORMATIONAL"}; !slices.Equal(got, want) {
		t.Fatalf("checks %v, want %v", got, want)
	}
	if fv := r.Checks[0].FamilyVerdict; fv["a"] != "FAILED" || fv["b"] != "NON-STRICT" {
		t.Errorf("M1's family verdicts: %v", fv)
	}
}
