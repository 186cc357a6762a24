package main

import (
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// TestLimitMemory: idemcheck runs under its soft memory limit, and a
// GOMEMLIMIT in the environment wins. Each case is a child process, so
// the runtime reads its own GOMEMLIMIT at start.
func TestLimitMemory(t *testing.T) {
	if os.Getenv("IDEMCHECK_MEMLIMIT_CHILD") == "1" {
		limitMemory()
		os.Stdout.WriteString(strings.TrimSpace(readLimit()))
		os.Exit(0)
	}
	for _, c := range []struct{ env, want string }{
		{"", "402653184"},                 // 384 MiB
		{"GOMEMLIMIT=1GiB", "1073741824"}, // the user's
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLimitMemory$")
		cmd.Env = append(os.Environ(), "IDEMCHECK_MEMLIMIT_CHILD=1")
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%q: %v", c.env, err)
		}
		if got := string(out); got != c.want {
			t.Errorf("%q: soft memory limit %s, want %s", c.env, got, c.want)
		}
	}
}

// readLimit is the runtime's soft memory limit, unchanged.
func readLimit() string { return strconv.FormatInt(debug.SetMemoryLimit(-1), 10) }
