package builtin_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/builtin"
	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/reference/garden"
	"github.com/idemcheck/idemcheck/reference/zoo"
	"github.com/idemcheck/idemcheck/target"
)

// TestGarden_NeverFails certifies every garden member over the family
// that exercises its choice, and holds it to "never FAILED": a correct
// server that chooses differently from the reference must end PASS or
// NON-STRICT. Seeds as the zoo's (see seeds).
func TestGarden_NeverFails(t *testing.T) {
	dir := withBinaries(t)
	ss := seeds(t)
	var b table
	b.printf("\n%-16s %-22s %-5s %-8s %s\n", "member", "family", "seed", "verdict", "checks")
	t.Run("members", func(t *testing.T) {
		for _, m := range builtin.Garden() {
			for _, seed := range ss {
				t.Run(fmt.Sprintf("%s/seed=%d", m.Name, seed), func(t *testing.T) {
					together(t, ss)
					verdict, got := certifyGarden(t, m, dir, seed)
					b.printf("%-16s %-22s %-5d %-8s %s\n", m.Name, m.Family, seed, verdict, got)
				})
			}
		}
	}) // returns when every member's run has ended
	t.Log(b.String())
}

// together runs a member's certification beside another when the
// self-validation runs one seed (make test): a certification mostly waits
// on its faults and examples, and one after another the garden and the
// providers' rows took about 320 of make test's seconds. Over
// IDEMCHECK_SEEDS they run one after another: timing is what is measured.
func together(t *testing.T, ss []uint64) {
	if len(ss) == 1 {
		t.Parallel()
	}
}

// table is a measurement table written by members' runs at once.
type table struct {
	mu sync.Mutex
	b  strings.Builder
}

func (tb *table) printf(format string, args ...any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	fmt.Fprintf(&tb.b, format, args...)
}

func (tb *table) String() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.b.String()
}

func certifyGarden(t *testing.T, m builtin.Member, dir string, seed uint64) (verdict, got string) {
	return certifyNeverFails(t, m, dir, seed, m.Family)
}

// certifyNeverFails certifies m over fams (the first the member's own) and
// holds it to "never FAILED". A family deliberately not judged (one that
// crashes servers, against a provider without idempotency) played no
// scenario, and says so.
func certifyNeverFails(t *testing.T, m builtin.Member, dir string, seed uint64, fams ...string) (verdict, got string) {
	tg, err := m.Target(dir)
	if err != nil {
		t.Fatal(err)
	}
	budget := memberBudget
	for _, name := range fams {
		fam, err := families.FamilyByName(name)
		if err != nil {
			t.Fatal(err)
		}
		budget = max(budget, fam.ExampleTime(tg)+5*time.Second)
	}
	ctx, cancel := context.WithTimeout(t.Context(), budget+2*time.Minute)
	defer cancel()
	rep, err := certify.Run(ctx, tg, certify.Options{Families: families.MustSelect(fams...), Seed: seed, Budget: budget, BudgetFromReady: true})
	if err != nil {
		t.Fatalf("certify %s: %v", m.Name, err)
	}
	got = summarize(rep)
	for _, c := range rep.Checks {
		if c.Verdict == "FAILED" {
			t.Errorf("%s: %s FAILED in %s: a legitimate choice failed (checks: %s)", m.Name, c.ID, c.Family, got)
		}
	}
	for _, v := range rep.Violations {
		t.Logf("violation: %+v", v)
	}
	if rep.Verdict == "fail" {
		t.Errorf("%s: overall verdict fail (checks: %s)", m.Name, got)
	}
	for _, name := range fams {
		if fr := familyResult(rep, name); fr == nil || (fr.Scenarios == 0 && !fr.NotJudged) {
			t.Errorf("%s: family %s played no scenario", m.Name, name)
		}
	}
	return rep.Verdict, got
}

// TestMembers_Table holds the table together without running anything:
// every member is served by the binary, names a family that exists, and
// the zoo declares what it fails while the garden declares nothing.
func TestMembers_Table(t *testing.T) {
	kinds := map[string]int{}
	for _, m := range builtin.Members {
		kinds[m.Kind]++
		_, zerr := zoo.Lookup(m.ServerVariant())
		_, gerr := garden.Lookup(m.ServerVariant())
		switch m.Kind {
		case "reference", "broken":
			if zerr != nil || m.Variant != "" {
				t.Errorf("%s: not in the zoo registry under its own name: %v", m.Name, zerr)
			}
		case "garden":
			if m.Variant == "" && (gerr != nil || !errors.Is(zerr, zoo.ErrUnknown)) {
				t.Errorf("%s: want it in the garden registry only (zoo: %v, garden: %v)", m.Name, zerr, gerr)
			}
			if m.Variant != "" && (zerr != nil || len(m.Flags) == 0 && m.Organisations == nil) {
				t.Errorf("%s: runs variant %s (zoo: %v) and must say how it differs: with which flags (%v) or organisations (%v)", m.Name, m.Variant, zerr, m.Flags, m.Organisations)
			}
			if len(m.Expect) > 0 || m.Verdict != "" {
				t.Errorf("%s: a garden member expects nothing to fail, got %v %s", m.Name, m.Expect, m.Verdict)
			}
		default:
			t.Errorf("%s: unknown kind %q", m.Name, m.Kind)
		}
		if m.Kind == "reference" {
			continue
		}
		if _, err := families.FamilyByName(m.Family); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
		if m.Kind == "broken" && (len(m.Expect) == 0 || m.Verdict == "") {
			t.Errorf("%s: a zoo member declares the check it fails", m.Name)
		}
		tg, err := m.Target(t.TempDir())
		if err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		for store, env := range map[string][2]string{"redis": {"REDIS_URL", "{{.RedisURL}}"}, "mysql": {"MYSQL_DSN", "{{.MySQLDSN}}"}} {
			if tg.NeedsStore(store) && (!slices.Contains(tg.Start.Args, "--store="+store) || tg.Start.Env[env[0]] != env[1]) {
				t.Errorf("%s needs %s but does not run on it: args %v, env %v", m.Name, store, tg.Start.Args, tg.Start.Env)
			}
		}
		if tg.NeedsPostgres() != (tg.Start.Env["DATABASE_URL"] != "") {
			t.Errorf("%s: needs %v but DATABASE_URL is %q", m.Name, tg.Needs, tg.Start.Env["DATABASE_URL"])
		}
	}
	if kinds["garden"] < 4 || kinds["broken"] < 14 {
		t.Errorf("members by kind: %v", kinds)
	}
}

// TestOwnShape_IsTheExampleFile: the built-in own-shape speaks exactly
// what examples/own-shape.yaml declares, so the example certifies the
// same server the table does.
func TestOwnShape_IsTheExampleFile(t *testing.T) {
	file, err := target.Load("../examples/own-shape.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := builtin.Lookup("own-shape")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := m.Target(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pay := target.Payment{Amount: 1250, Currency: "usd", OrderID: "ord_1", Description: "idemcheck"}
	a, errA := file.Protocol.Request(pay, target.Writing{})
	b, errB := tg.Protocol.Request(pay, target.Writing{})
	if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("example %+v (%v)\nbuilt-in %+v (%v)", a, errA, b, errB)
	}
	if !slices.Contains(file.Start.Args, "--variant=own-shape") {
		t.Errorf("the example runs %v", file.Start.Args)
	}
}
