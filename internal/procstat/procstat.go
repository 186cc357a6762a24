// Package procstat reads how much CPU a process has used, from Linux's
// /proc/PID/stat, for benchmarks on a shared machine: CPU time per op does
// not move with the machine's other load, where wall time does.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// tick is a clock tick of /proc/PID/stat (USER_HZ, 100 on Linux).
const tick = 10 * time.Millisecond

// Stat is a process's parent and the CPU time it and its reaped children
// have used (user and system).
type Stat struct {
	PPID int
	CPU  time.Duration
}

// Read reads pid's Stat; ok is false where /proc cannot be read.
func Read(pid int) (st Stat, ok bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, false
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from its closing parenthesis (state is field 3, ppid 4, utime 14
	// to cstime 17).
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 15 {
		return st, false
	}
	st.PPID, _ = strconv.Atoi(f[1])
	for _, v := range f[11:15] {
		t, _ := strconv.ParseInt(v, 10, 64)
		st.CPU += time.Duration(t) * tick
	}
	return st, true
}

// Self is the CPU time this process has used so far (zero where /proc
// cannot be read).
func Self() time.Duration {
	st, _ := Read(os.Getpid())
	return st.CPU
}

// Children is the CPU time used by pid and all its children, live or
// reaped: a server's, such as PostgreSQL's postmaster and its backends.
func Children(pid int) time.Duration {
	st, _ := Read(pid)
	total := st.CPU
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if child, err := strconv.Atoi(p.Name()); err == nil {
			if c, ok := Read(child); ok && c.PPID == pid {
				total += c.CPU
			}
		}
	}
	return total
}
