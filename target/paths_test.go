package target_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/target"
)

// TestLoad_RelativePathsFromTheFilesFolder: a relative start.command and
// start.dir are taken from the target file's folder, not from where
// idemcheck runs; bare commands, absolute paths, templates and a
// container's command are left alone; {{.TargetDir}} names the folder.
func TestLoad_RelativePathsFromTheFilesFolder(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "svc")
	os.MkdirAll(sub, 0o755)
	write := func(name, body string) string {
		p := filepath.Join(sub, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	t.Chdir(dir) // load by a relative path, from the parent folder
	cases := []struct {
		file, body, command, workdir string
	}{
		{"rel.yaml", "start: {command: ./bin/server, dir: data, args: ['--conf={{.TargetDir}}/conf.yaml']}", filepath.Join(sub, "bin/server"), filepath.Join(sub, "data")},
		{"up.yaml", "start: {command: ../bin/server}", filepath.Join(dir, "bin/server"), ""},
		{"bare.yaml", "start: {command: python3, args: [srv.py]}", "python3", ""},
		{"abs.yaml", "start: {command: /usr/bin/env, dir: /tmp}", "/usr/bin/env", "/tmp"},
		{"tmpl.yaml", "start: {command: '{{.WorkDir}}/srv'}", "/scratch/srv", ""},
		{"image.yaml", "image: payments:1.4\nstart: {command: ./serve}", "./serve", ""},
	}
	for _, c := range cases {
		write(c.file, "name: x\n"+c.body+"\npolicy: {ttl: 1h}\n")
		tg, err := target.Load(filepath.Join("svc", c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		r, err := tg.Render(target.Vars{ListenAddr: "127.0.0.1:1", WorkDir: "/scratch", TTL: time.Hour})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if r.Command != c.command || r.Dir != c.workdir {
			t.Errorf("%s: command %q dir %q; want %q and %q", c.file, r.Command, r.Dir, c.command, c.workdir)
		}
		if tg.Dir != sub {
			t.Errorf("%s: Dir %q, want %q", c.file, tg.Dir, sub)
		}
		if c.file == "rel.yaml" && (len(r.Args) != 1 || r.Args[0] != "--conf="+sub+"/conf.yaml") {
			t.Errorf("{{.TargetDir}} rendered as %v", r.Args)
		}
	}
}

// TestLoad_ExampleRunsFromAnywhere: examples/reference.yaml names the
// reference server relative to itself, so it resolves to bin/ at the
// repository's root from any working directory.
func TestLoad_ExampleRunsFromAnywhere(t *testing.T) {
	root, _ := filepath.Abs("..")
	t.Chdir(t.TempDir())
	tg, err := target.Load(filepath.Join(root, "examples", "reference.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "bin", "reference-server"); tg.Start.Command != want {
		t.Fatalf("command %q, want %q", tg.Start.Command, want)
	}
	if !strings.HasPrefix(tg.Dir, root) {
		t.Fatalf("Dir %q", tg.Dir)
	}
}

// TestLoad_InstallStepFromTheFilesFolder: install's relative command and
// dir are taken from the target file's folder like start's; without dir
// the step runs in that folder.
func TestLoad_InstallStepFromTheFilesFolder(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ body, command, dir string }{
		{"install: {command: go, args: [build, -o, ../bin/srv, .], dir: ../glue}", "go", filepath.Join(filepath.Dir(dir), "glue")},
		{"install: {command: ./build.sh}", filepath.Join(dir, "build.sh"), dir},
	}
	for _, c := range cases {
		p := filepath.Join(dir, "t.yaml")
		os.WriteFile(p, []byte("name: x\nstart: {command: ./srv}\n"+c.body+"\npolicy: {ttl: 1h}\n"), 0o644)
		tg, err := target.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if tg.Install == nil || tg.Install.Command != c.command || tg.Install.Dir != c.dir {
			t.Errorf("%s: install = %+v, want command %s in %s", c.body, tg.Install, c.command, c.dir)
		}
	}
}
