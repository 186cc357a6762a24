package yamlfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/internal/yamlfile"
)

var errKind = errors.New("invalid test file")

type doc struct {
	Name string   `yaml:"name"`
	List []string `yaml:"list"`
}

// A YAML tag is refused with its line before decoding: goccy/go-yaml
// v1.19.2 panics on a tag over a scalar where a list is expected
// (goccy/go-yaml#735), the first crash FuzzParseIncident found.
func TestDecode_RefusesTags(t *testing.T) {
	for in, want := range map[string]string{
		"name: x\nlist:\n !0 #0\n":   "t.yaml:3: unexpected YAML tag !0",
		"name: !!str x\n":            "t.yaml:1: unexpected YAML tag !!str",
		"name: x\nlist: !!seq [a]\n": "t.yaml:2: unexpected YAML tag !!seq",
		"name: x\nlist: [a, '!b']\n": "",
	} {
		var d doc
		err := yamlfile.Decode("t.yaml", []byte(in), &d, errKind)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", in, err)
		case want != "" && (err == nil || !errors.Is(err, errKind) || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("%q:\n got %v\nwant prefix %q", in, err, want)
		}
	}
}

// A file that is not UTF-8 is refused at the line of its first bad byte:
// goccy/go-yaml would read the byte as U+FFFD and a body would send
// another text than the file holds.
func TestDecode_RefusesNonUTF8(t *testing.T) {
	var d doc
	err := yamlfile.Decode("t.yaml", []byte("name: x\nlist: [caf\xe9]\n"), &d, errKind)
	if err == nil || !errors.Is(err, errKind) || !strings.HasPrefix(err.Error(), "t.yaml:2: expected UTF-8") {
		t.Fatalf("got %v", err)
	}
}
