package builtin_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/builtin"
	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/reports"
)

// Budgets of the self-validation: a zoo member must fail within
// memberBudget on seed 1, counted from when its environment is ready
// (certify.Options.BudgetFromReady): on a loaded machine, starting
// PostgreSQL and the replicas took up to 10s of a 12s budget, and the
// members' crash waves no longer fit. The other way, the reference passing every
// default family at the default budget on seed 1, is the README's
// `certify --target reference`, run by cmd/idemcheck's
// TestREADME_NewcomersWalk.
const (
	memberBudget = 12 * time.Second
	shrinkBudget = 8 * time.Second
)

// binDir is where TestMain built reference-server, once for all tests.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "idemcheck-zoo-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// withBinaries skips (or, on CI, fails) without PostgreSQL, and builds
// reference-server on first use.
func withBinaries(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("self-validation certifies every zoo member: minutes, not -short")
	}
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(m) == 0 && os.Getenv("PG_BIN") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no PostgreSQL server binaries on CI: install postgresql or set PG_BIN")
		}
		t.Skip("no PostgreSQL server binaries: install postgresql or set PG_BIN")
	}
	if _, err := os.Stat(filepath.Join(binDir, "reference-server")); err != nil {
		out, err := exec.Command("go", "build", "-o", binDir, "github.com/idemcheck/idemcheck/cmd/reference-server").CombinedOutput()
		if err != nil {
			t.Fatalf("go build reference-server: %v\n%s", err, out)
		}
	}
	return binDir
}

// zooRow is one line of the measurement table: one member over the seeds.
type zooRow struct {
	name, family, expect string
	got                  []string        // per seed
	firstFailure         []time.Duration // per seed that failed
	requests, faults     int             // shrunk, last seed
}

// seeds are the seeds the self-validation runs: 1, or the list or range
// in IDEMCHECK_SEEDS ("1-10", "3,7"), to measure the zoo/garden table
// over many seeds (go test ./builtin -run 'Zoo_Fails|Garden' -timeout 3h).
func seeds(t *testing.T) []uint64 {
	spec := os.Getenv("IDEMCHECK_SEEDS")
	if spec == "" {
		return []uint64{1}
	}
	var out []uint64
	for part := range strings.SplitSeq(spec, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.ParseUint(lo, 10, 64)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.ParseUint(hi, 10, 64)
		}
		if err1 != nil || err2 != nil || a == 0 || b < a {
			t.Fatalf("IDEMCHECK_SEEDS=%q: want seeds >= 1 as \"1-10\" or \"3,7\"", spec)
		}
		for s := a; s <= b; s++ {
			out = append(out, s)
		}
	}
	return out
}

// TestZoo_FailsAsDeclared certifies every zoo member over its family and
// holds it to its row of builtin.Members on every seed: the expected check
// with the expected verdict, and the overall verdict that follows.
// On seed 1 alone (make test) members run two at a time (go test's
// -parallel is GOMAXPROCS, 2 here): a certification mostly waits on its
// faults and examples, and one after another they took 381s of CI's 30
// minutes. Measuring the table over IDEMCHECK_SEEDS runs them one after
// another: timing is what is measured.
func TestZoo_FailsAsDeclared(t *testing.T) {
	dir := withBinaries(t)
	ss := seeds(t)
	together := len(ss) == 1
	var rows []*zooRow
	t.Run("members", func(t *testing.T) {
		for _, m := range builtin.Zoo() {
			row := &zooRow{name: m.Name, family: m.Family, expect: strings.Join(m.Expect, ",") + " " + m.Verdict}
			rows = append(rows, row)
			for _, seed := range ss {
				t.Run(fmt.Sprintf("%s/seed=%d", m.Name, seed), func(t *testing.T) {
					if together {
						t.Parallel() // one seed: each row has one writer
					}
					certifyMember(t, m, dir, seed, row)
				})
			}
		}
	}) // returns when every member's run has ended
	rows = slices.DeleteFunc(rows, func(r *zooRow) bool { return len(r.got) == 0 }) // filtered out by -run
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-26s %-22s %-14s %-7s %9s %9s  %-28s %s\n", "member", "family", "expect", "failed", "1st med", "1st max", "got (distinct)", "shrunk")
	for _, r := range rows {
		slices.Sort(r.firstFailure)
		med, most := time.Duration(0), time.Duration(0)
		if n := len(r.firstFailure); n > 0 {
			med, most = r.firstFailure[(n-1)/2], r.firstFailure[n-1]
		}
		got := slices.Clone(r.got)
		slices.Sort(got)
		fmt.Fprintf(&b, "%-26s %-22s %-14s %3d/%-3d %9s %9s  %-28s %d req, %d faults\n",
			r.name, r.family, r.expect, len(r.firstFailure), len(ss), med.Round(10*time.Millisecond), most.Round(10*time.Millisecond),
			strings.Join(slices.Compact(got), " | "), r.requests, r.faults)
	}
	t.Log(b.String())
}

func certifyMember(t *testing.T, m builtin.Member, dir string, seed uint64, row *zooRow) {
	tg, err := m.Target(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := time.Duration(-1)
	budget := memberBudget
	if fam, err := families.FamilyByName(m.Family); err == nil {
		// A crash wave waits out the recovery window, a late-retry
		// example the retry window: the first examples in flight at once
		// must fit, with room for the set-up.
		budget = max(budget, fam.ExampleTime(tg)+5*time.Second)
	}
	ctx, cancel := context.WithTimeout(t.Context(), budget+2*time.Minute)
	defer cancel()
	rep, err := certify.Run(ctx, tg, certify.Options{Families: families.MustSelect(m.Family), Seed: seed, Budget: budget, BudgetFromReady: true, ShrinkBudget: shrinkBudget,
		Progress: func(p certify.Progress) {
			if first < 0 && p.Violations > 0 {
				first = p.Elapsed
			}
		}})
	if err != nil {
		t.Fatalf("certify %s: %v", m.Name, err)
	}
	got := summarize(rep)
	if fr := familyResult(rep, m.Family); fr != nil {
		row.requests, row.faults = fr.ShrunkRequests, fr.ShrunkFaults
		if first < 0 {
			// Not seen while exploring: found by the run's reconciliation
			// (a charge made after its example was judged), as late as
			// the family's report says.
			first = time.Duration(fr.FirstFailure)
		}
	}
	shown := false
	for _, id := range m.Expect {
		// A run-wide check (A1's accounting, T1) is in the run's rows.
		shown = shown || checkVerdict(rep, m.Family, id) == m.Verdict || checkVerdict(rep, "run", id) == m.Verdict
	}
	if t1 := checkVerdict(rep, "run", "T1"); t1 == "FAILED" && !slices.Contains(m.Expect, "T1") {
		t.Errorf("%s seed %d: T1 harness untouched FAILED: only a member that reaches for the harness may (checks: %s)", m.Name, seed, got)
	}
	if shown {
		row.firstFailure = append(row.firstFailure, max(first, 0))
	}
	if !shown && m.Denies != "" && rep.Level < m.Denies && rep.Verdict != "pass" {
		// The bug went undrawn, but the run did not grant the level it
		// breaks: honest about its evidence.
		row.got = append(row.got, got+" ("+m.Denies+" denied: level "+rep.Level+", "+rep.Verdict+")")
		return
	}
	row.got = append(row.got, got)
	if !shown {
		t.Errorf("%s seed %d: none of %v in %s is %s, and the run grants level %s (checks: %s)", m.Name, seed, m.Expect, m.Family, m.Verdict, rep.Level, got)
	}
	switch {
	case m.Verdict == "NON-STRICT" && rep.Verdict == "fail":
		// Safe but not what the draft asks: nothing may fail. A check
		// left UNKNOWN (late-retry's at a promise's edge when probes are
		// held up) proves nothing either way.
		t.Errorf("%s seed %d: overall verdict %q, want no failure (checks: %s)", m.Name, seed, rep.Verdict, got)
	case m.Verdict != "NON-STRICT" && rep.Verdict != "fail":
		t.Errorf("%s seed %d: overall verdict %q, want %q (checks: %s)", m.Name, seed, rep.Verdict, "fail", got)
	}
}

func familyResult(rep *reports.Report, family string) *reports.FamilyResult {
	for i := range rep.Families {
		if rep.Families[i].Name == family {
			return &rep.Families[i]
		}
	}
	return nil
}

func checkVerdict(rep *reports.Report, family, id string) string {
	for _, c := range rep.Checks {
		if c.ID == id && c.Family == family {
			return c.Verdict
		}
	}
	return "missing"
}

// summarize lists the checks that did not pass, e.g. "M1:FAILED R3:NON-STRICT".
func summarize(rep *reports.Report) string {
	var out []string
	for _, c := range rep.Checks {
		if c.Verdict != "PASS" && c.Verdict != "INFORMATIONAL" {
			out = append(out, c.ID+":"+c.Verdict)
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "all pass"
	}
	return strings.Join(slices.Compact(out), " ")
}
