package conformance_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/idemcheck/idemcheck/builtin"
	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/target"
)

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "idemcheck conformance")
}

// suite is the one environment every family shares: examples use fresh
// tenants, keys and orders, so nothing is reset between them.
var suite struct {
	target *target.Target
	env    harness.Env
}

var _ = BeforeSuite(func(ctx SpecContext) {
	if os.Getenv("CI") != "true" && !havePostgres() {
		Skip("no PostgreSQL server binaries: install postgresql or set PG_BIN")
	}
	Expect(budgetErr).NotTo(HaveOccurred(), "IDEMCHECK_BUDGET: expected a duration such as 60s")
	suite.target = loadTarget()
	env, err := process.Launch(ctx, suite.target, harness.Options{})
	Expect(err).NotTo(HaveOccurred(), "environment for %s", suite.target.Name)
	suite.env = env
	DeferCleanup(env.Close)
}, NodeTimeout(3*time.Minute))

func havePostgres() bool {
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	return len(m) > 0 || os.Getenv("PG_BIN") != ""
}

// budget is each family's time: IDEMCHECK_BUDGET, default 5s so that the
// suite stays a quick gate in `make test`; nightly runs raise it. It is
// read when the spec tree is built, because node timeouts depend on it.
var budget, budgetErr = func() (time.Duration, error) {
	if v := os.Getenv("IDEMCHECK_BUDGET"); v != "" {
		return time.ParseDuration(v)
	}
	return 5 * time.Second, nil
}()

// loadTarget reads IDEMCHECK_TARGET (a built-in name or a target file),
// default the reference, building reference-server when it is needed.
func loadTarget() *target.Target {
	name := os.Getenv("IDEMCHECK_TARGET")
	if name == "" {
		name = "reference"
	}
	if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
		t, err := target.Load(name)
		Expect(err).NotTo(HaveOccurred())
		return t
	}
	m, err := builtin.Lookup(name)
	Expect(err).NotTo(HaveOccurred())
	t, err := m.Target(buildServer())
	Expect(err).NotTo(HaveOccurred())
	return t
}

func buildServer() string {
	dir := GinkgoT().TempDir()
	cmd := exec.Command("go", "build", "-o", dir, "github.com/idemcheck/idemcheck/cmd/reference-server")
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build reference-server: %s", out)
	return dir
}

// One container per family, labelled with the family and its level, so
// `-ginkgo.label-filter` selects a level or a family.
var _ = func() bool {
	for _, fam := range families.Families {
		if fam.Name == "mixed" {
			continue
		}
		fam := fam
		Describe(fam.Name, Label("family:"+fam.Name, fam.Level), func() {
			It("finds no violation: "+fam.Doc, func(ctx SpecContext) {
				// A family gets at least one example's time and a margin:
				// a crash wave or a late-retry example waits out the
				// target's recovery window or retry window.
				b := max(budget, fam.ExampleTime(suite.target)+5*time.Second)
				rep, err := certify.Run(ctx, suite.target, certify.Options{Families: []families.Family{fam}, Budget: b, Env: suite.env, Seed: seed()})
				Expect(err).NotTo(HaveOccurred())
				for _, c := range rep.Checks {
					Expect(c.Verdict).NotTo(Equal("FAILED"), "%s %s: %s", c.ID, c.Name, c.Note)
					Expect(c.Verdict).NotTo(Equal("UNKNOWN"), "%s %s: %s", c.ID, c.Name, c.Note)
				}
				for _, v := range rep.Violations {
					AddReportEntry(v.Invariant, v.Explanation+"\n"+v.Replay)
				}
				Expect(rep.Families).To(HaveLen(1))
				Expect(rep.Families[0].Scenarios).To(BeNumerically(">", 0), "no scenario was played")
			}, NodeTimeout(budget+3*time.Minute))
		})
	}
	return true
}()

// seed is IDEMCHECK_SEED, default 1: the same seed replays the same run.
func seed() uint64 {
	s, err := strconv.ParseUint(os.Getenv("IDEMCHECK_SEED"), 10, 64)
	if err != nil || s == 0 {
		return 1
	}
	return s
}
