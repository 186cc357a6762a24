package process_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/target"
)

// TestInstall_RunsInItsFolder: the install step runs once in its dir, and
// a failing one names the command, the folder and what it printed.
func TestInstall_RunsInItsFolder(t *testing.T) {
	dir := t.TempDir()
	tg := &target.Target{Name: "svc", Install: &target.Install{Command: "sh", Args: []string{"-c", "echo built > out"}, Dir: dir}}
	if err := process.Install(context.Background(), tg, io.Discard); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out")); err != nil || string(b) != "built\n" {
		t.Fatalf("the step did not run in %s: %q, %v", dir, b, err)
	}
	tg.Install.Args = []string{"-c", "echo cannot find module; exit 3"}
	err := process.Install(context.Background(), tg, io.Discard)
	for _, want := range []string{"install step of svc", "sh -c", dir, "exit status 3", "cannot find module"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	if err := process.Install(context.Background(), &target.Target{Name: "none"}, io.Discard); err != nil {
		t.Errorf("a target without install: %v", err)
	}
}
