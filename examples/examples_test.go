// Package examples_test keeps the documentation's target files true: every
// YAML block in README.md and docs/*.md is a file of this folder, byte for
// byte, and every file here loads as a valid target. It imports only
// target.
package examples_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/target"
)

// yamlBlock is a fenced ```yaml block of a Markdown file.
var yamlBlock = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```$")

// examples maps each examples/*.yaml file's content to its name.
func examples(t *testing.T) map[string]string {
	t.Helper()
	files, _ := filepath.Glob("*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples/*.yaml")
	}
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[string(data)] = f
	}
	return out
}

func TestExamples_EveryDocYAMLBlockIsAnExampleFile(t *testing.T) {
	byContent := examples(t)
	docs, _ := filepath.Glob("../docs/*.md")
	blocks := 0
	for _, doc := range append([]string{"../README.md"}, docs...) {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range yamlBlock.FindAllStringSubmatch(string(data), -1) {
			blocks++
			if _, ok := byContent[m[1]]; !ok {
				first, _, _ := strings.Cut(strings.TrimPrefix(m[1], "# "), "\n")
				t.Errorf("%s: a yaml block (%q…) is no file of examples/: paste the file, or add it there", doc, first)
			}
		}
	}
	if blocks < 2 {
		t.Errorf("found %d yaml blocks in the docs; the README shows at least the reference and a container target", blocks)
	}
}

func TestExamples_EveryFileLoads(t *testing.T) {
	for _, f := range examples(t) {
		tg, err := target.Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		// A certification waits multiples of the TTL: an example that
		// would not fit the default budget teaches UNKNOWN, exit 3.
		if tg.Policy.TTL > 10e9 {
			t.Errorf("%s: policy.ttl %s; examples certify in test mode with a TTL of seconds", f, tg.Policy.TTL)
		}
	}
}

// TestExamples_ReadmeNamesTheFiles: the README says which file each block is.
func TestExamples_ReadmeNamesTheFiles(t *testing.T) {
	data, _ := os.ReadFile("../README.md")
	for _, f := range examples(t) {
		if !strings.Contains(string(data), "examples/"+f) {
			t.Errorf("README.md never names examples/%s", f)
		}
	}
}
