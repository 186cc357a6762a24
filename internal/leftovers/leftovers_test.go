package leftovers_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/idemcheck/idemcheck/internal/leftovers"
)

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestClean_RemovesOnlyTheDeadRunsFolders(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name string) string {
		d := filepath.Join(tmp, name)
		os.MkdirAll(filepath.Join(d, "data"), 0o755)
		return d
	}
	mine := mk("idemcheck-env-live")
	if err := leftovers.Mark(mine); err != nil {
		t.Fatal(err)
	}
	deadEnv, deadPG := mk("idemcheck-env-dead"), mk("idemcheck-pg-dead")
	for _, d := range []string{deadEnv, deadPG} {
		os.WriteFile(filepath.Join(d, leftovers.PIDFile), []byte(strconv.Itoa(deadPID(t))+"\n"), 0o644)
	}
	reused := mk("idemcheck-pg-reused") // our pid, another process's start time
	os.WriteFile(filepath.Join(reused, leftovers.PIDFile), []byte(strconv.Itoa(os.Getpid())+" 1\n"), 0o644)
	unmarked := mk("idemcheck-env-unmarked")
	other := mk("something-else")
	os.WriteFile(filepath.Join(other, leftovers.PIDFile), []byte(strconv.Itoa(deadPID(t))), 0o644)

	removed, err := leftovers.Clean(tmp)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	want := []string{deadEnv, deadPG, reused}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for _, d := range []string{mine, unmarked, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	for _, d := range want {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still there", d)
		}
	}
}
