package certify

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/search"
)

// writeIncident writes a failing family's shrunk counterexample as an
// incident file in dir, expecting the verdicts it produced, so that it
// replays with one command and can join scenarios/incidents/.
func writeIncident(dir string, rep *reports.Report, fr *familyRun) error {
	if dir == "" || fr.fail == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sc := Incident(fr.fail, fmt.Sprintf("%s-%s-seed%d", rep.Target, fr.Name, fr.FailSeed))
	sc.Target = rep.Target
	data, err := sc.Marshal()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "incident-"+fr.Name+".yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	fr.Incident = path
	return nil
}

// Incident turns a failing example into an incident scenario whose
// expectations are the verdicts it produced (FAILED and NON-STRICT).
func Incident(ex *search.Example, name string) scenarios.Scenario {
	sc := ex.Scenario
	sc.Name = name
	sc.Description = "shrunk counterexample found by idemcheck"
	sc.Expect = nil
	for _, c := range ex.Result.Checks {
		if c.Verdict == checker.Failed || c.Verdict == checker.NonStrict {
			sc.Expect = append(sc.Expect, scenarios.Expect{Check: c.ID, Verdict: string(c.Verdict)})
		}
	}
	return sc
}
