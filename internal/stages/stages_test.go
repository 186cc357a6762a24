package stages_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/idemcheck/idemcheck/"

// rank orders every package of the module: a package may import only
// packages of a lower rank. A package missing here fails the test, so a
// new package is placed deliberately.
var rank = map[string]int{
	"crashwave": 0, "internal/yamlfile": 0, "internal/freeport": 0, "internal/leftovers": 0,
	"gateway-sim": 0, "reference": 0, "images": 0, "images/pg-entrypoint": 0, "examples": 0, "internal/stages": 0,
	"internal/boundedlog": 0, "internal/shared": 0, "internal/procstat": 0,
	"scenarios/conformance": 0,

	"history": 1, "internal/daemon": 1,

	"checker": 2, "target": 2, "internal/pgcluster": 2, "internal/redisserver": 2, "internal/mysqlserver": 2, "reference/redisstore": 2,
	"reference/storetest": 2, "reference/mysqlstore": 2,
	"internal/fuzzcheck": 2,

	"client": 3, "harness": 3, "internal/pgtest": 3, "internal/redistest": 3, "internal/mysqltest": 3, "reports": 3, "builtin": 3,
	"reference/zoo": 3, "target/openapi": 3,

	"faults": 4, "contact": 4, "harness/process": 4, "harness/docker": 4, "reference/garden": 4,

	"scenarios": 5, "harness/harnesstest": 5,

	"families": 6, "ledger": 6,

	"runner": 7,

	"search": 8,

	"certify": 9,

	"cmd/idemcheck": 10, "cmd/reference-server": 10, "cmd/gateway-sim": 10, "gallery/gallerydoc": 10,
}

// neverImports are imports a stage must not make whatever the ranks say:
// the checker is pure (history in, verdicts out), the generators draw
// without playing or judging, and the ledger and the runner record
// without judging.
var neverImports = map[string][]string{
	"checker":  {"target", "scenarios", "faults", "harness", "client", "gateway-sim"},
	"families": {"checker", "runner", "search", "ledger"},
	"ledger":   {"checker"},
	"runner":   {"checker", "families", "search"},
}

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestStages_NoImportRunsBackUp: every package imports only lower stages
// (its non-test files; tests may reach up to build a fixture).
func TestStages_NoImportRunsBackUp(t *testing.T) {
	for _, p := range listPackages(t) {
		name := strings.TrimPrefix(p.ImportPath, module)
		r, ok := rank[name]
		if !ok {
			t.Errorf("package %s has no rank: place it in stages_test.go's table", name)
			continue
		}
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if rank[dep] >= r {
				t.Errorf("%s (rank %d) imports %s (rank %d): an import runs back up", name, r, dep, rank[dep])
			}
			for _, never := range neverImports[name] {
				if dep == never {
					t.Errorf("%s imports %s, which it must never import", name, dep)
				}
			}
		}
	}
}
