// Package leftovers removes what killed runs left behind. A run creates
// temporary folders (idemcheck-env-* for replica scratch space, and
// idemcheck-pg-*, idemcheck-redis-* and idemcheck-mysql-* for throwaway
// stores) and removes them when
// it ends; a run killed with SIGKILL cannot. Each such folder carries a
// pid file written by Mark, and the next run calls Clean, which removes the
// folders whose process is gone.
//
// It imports no idemcheck package; harness/process, internal/pgcluster and
// cmd/idemcheck use it.
package leftovers

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// PIDFile is the name of the file Mark writes into a temporary folder.
const PIDFile = "idemcheck.pid"

// Patterns are the temporary folders Clean looks at, in the temp dir.
var Patterns = []string{"idemcheck-env-*", "idemcheck-pg-*", "idemcheck-redis-*", "idemcheck-mysql-*"}

// Mark records in dir that this process owns it: its pid and, where the
// system says, the process's start time, so that a later process reusing
// the pid is not mistaken for the owner.
func Mark(dir string) error {
	pid := os.Getpid()
	line := fmt.Sprintf("%d %s\n", pid, startTime(pid))
	return os.WriteFile(filepath.Join(dir, PIDFile), []byte(line), 0o644)
}

// Clean removes every folder in tmp matching Patterns whose pid file names
// a process that is gone, and returns the folders removed. A folder
// without a pid file (another tool's, or a run still creating it) is left
// alone, and so is one whose owner still runs.
func Clean(tmp string) (removed []string, err error) {
	var errs []string
	for _, pat := range Patterns {
		dirs, _ := filepath.Glob(filepath.Join(tmp, pat))
		for _, dir := range dirs {
			if Alive(dir) {
				continue
			}
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, err.Error())
				continue
			}
			removed = append(removed, dir)
		}
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("leftovers: %s", strings.Join(errs, "; "))
	}
	return removed, nil
}

// Alive reports whether dir's owner may still be running: true when dir
// has no readable pid file, or its process exists with the recorded start
// time.
func Alive(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, PIDFile))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return true
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil || pid <= 0 {
		return true
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	if len(fields) > 1 && fields[1] != "" {
		if now := startTime(pid); now != "" && now != fields[1] {
			return false // the pid was reused by another process
		}
	}
	return true
}

// startTime is the process's start time in clock ticks since boot (field
// 22 of /proc/<pid>/stat), or "" where /proc does not say.
func startTime(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(data)
	// The command name (field 2) may hold spaces; fields after its ')' are plain.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19] // field 22 overall: field 3 is f[0]
}
