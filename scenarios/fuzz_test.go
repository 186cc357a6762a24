package scenarios_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/idemcheck/idemcheck/internal/fuzzcheck"
	"github.com/idemcheck/idemcheck/scenarios"
)

// FuzzParseIncident feeds arbitrary bytes to the incident loader. A
// parse returns a scenario or an error naming the file and a line or
// field, within fuzzcheck.Timeout, never a panic. A scenario it accepts
// survives the round trip the search relies on when it writes a shrunk
// counterexample as an incident file: Marshal, then ParseIncident, gives
// the same scenario and the same replayable lines. It asserts nothing
// about particular fields, so fields added to incident files are covered
// as they come. Seeds: the regression table, scenarios/incidents/; the
// corpus is kept in testdata/fuzz/FuzzParseIncident.
func FuzzParseIncident(f *testing.F) {
	files, _ := filepath.Glob("incidents/*.yaml")
	more, _ := filepath.Glob("incidents/*/*.yaml")
	if len(files) == 0 {
		f.Fatal("no scenarios/incidents/*.yaml to seed the corpus")
	}
	for _, file := range append(files, more...) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"name: x\nsteps:\n  - send: {key: k1}\n",
		"name: x\nsteps:\n  - fault: {id: f, kind: latency, link: client->replica0, params: {latency: fast}}\n",
		"name: x\nsteps:\n  - send: {key: k, order: o, key_form: quoted, writing: reordered, edit: /customer, body: '{\"a\": 1}'}\n  - wait: {ttl: 1.5}\n  - pause: 1\n    point: before-store\n    payment: o\n",
	} {
		f.Add([]byte(s))
	}
	const name = "fuzz.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzcheck.MaxInput {
			t.Skip("larger than any incident file")
		}
		defer fuzzcheck.Watchdog(data)()
		sc, err := fuzzcheck.Parse(t, name, data, scenarios.ParseIncident)
		if err != nil {
			fuzzcheck.NamesPlace(t, err, name, data, scenarios.ErrInvalid)
			return
		}
		out, err := sc.Marshal()
		if err != nil {
			t.Fatalf("an accepted incident does not marshal: %v", err)
		}
		back, err := scenarios.ParseIncident(name, out)
		if err != nil {
			t.Fatalf("a written incident does not load back: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(scenarios.Loaded(back), scenarios.Loaded(sc)) {
			t.Fatalf("round trip changed the scenario:\n%+v\n%+v\nwritten:\n%s", sc, back, out)
		}
		for i := range sc.Steps {
			if a, b := sc.Steps[i].String(), back.Steps[i].String(); a != b {
				t.Fatalf("round trip changed step %d:\n%s\n%s", i, a, b)
			}
		}
	})
}
