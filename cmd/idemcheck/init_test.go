package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/target"
)

const chargesSpec = "../../target/openapi/testdata/charges.yaml"

func TestCLI_InitWritesAFileThatLoads(t *testing.T) {
	out := filepath.Join(t.TempDir(), "charges.yaml")
	code, stdout, stderr := runCLI(t, "init", "--openapi", chargesSpec, "--command", "/opt/srv/server --variant=stripe-body '--ttl={{.TTL}}'", "--out", out)
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "Next: idemcheck doctor --target "+out+"\n") {
		t.Errorf("stderr %q: want the next step naming the file", stderr)
	}
	tg, err := target.Load(out)
	if err != nil {
		t.Fatalf("the written file does not load: %v", err)
	}
	if tg.Start.Command != "/opt/srv/server" || strings.Join(tg.Start.Args, " ") != "--variant=stripe-body --ttl={{.TTL}}" || tg.Protocol.Fields.OrderID != "/metadata/order_id" {
		t.Errorf("start %q %q, order field %q", tg.Start.Command, tg.Start.Args, tg.Protocol.Fields.OrderID)
	}
}

func TestCLI_InitRefusesToOverwrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mine.yaml")
	os.WriteFile(out, []byte("keep me\n"), 0o644)
	code, _, stderr := runCLI(t, "init", "--out", out)
	if data, _ := os.ReadFile(out); code != exitUsage || string(data) != "keep me\n" || !strings.Contains(stderr, "exists: pass --force to overwrite it") {
		t.Fatalf("exit %d, file %q, stderr %s", code, data, stderr)
	}
	if code, _, stderr := runCLI(t, "init", "--out", out, "--force"); code != 0 {
		t.Fatalf("--force: exit %d, %s", code, stderr)
	}
	if _, err := target.Load(out); err != nil {
		t.Errorf("the template written over it does not load: %v", err)
	}
}

func TestCLI_InitTemplateOnStdout(t *testing.T) {
	code, stdout, stderr := runCLI(t, "init")
	if code != 0 || !strings.Contains(stderr, "idemcheck doctor --target") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if _, err := target.Parse("stdout", []byte(stdout)); err != nil {
		t.Errorf("the template does not load: %v\n%s", err, stdout)
	}
}

func TestCLI_InitBadInputExits2(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"init", "--openapi", "no-such.yaml"}, "no-such.yaml: cannot read the OpenAPI document"},
		{[]string{"init", "--openapi", chargesSpec, "--operation", "Nope"}, "charges.yaml:14: #/paths: --operation Nope: no operation has that operationId; the document has POST /v1/charges (PostCharges)"},
		{[]string{"init", "--operation", "PostCharges"}, "--operation needs --openapi"},
		{[]string{"init", "--command", `./srv 'x`}, "--command: unterminated '"},
		{[]string{"init", "extra"}, `unexpected argument "extra"`},
	}
	for _, c := range cases {
		code, stdout, stderr := runCLI(t, c.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}
