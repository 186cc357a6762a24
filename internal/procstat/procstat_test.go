package procstat

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// Read names this process's parent, and a parent's count holds its
// children's: a child that ran and was reaped adds to it.
func TestRead_ParentAndChildren(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/stat is Linux's")
	}
	st, ok := Read(os.Getpid())
	if !ok || st.PPID != os.Getppid() {
		t.Fatalf("Read(self) = %+v, %v; want parent %d", st, ok, os.Getppid())
	}
	if _, ok := Read(-1); ok {
		t.Error("Read(-1) ok")
	}
	if Children(os.Getppid()) < Self() {
		t.Errorf("the parent and its children used less CPU (%s) than this child alone (%s)", Children(os.Getppid()), Self())
	}
	before := Self()
	if err := exec.Command("sh", "-c", "i=0; while [ $i -lt 50000 ]; do i=$((i+1)); done").Run(); err != nil {
		t.Fatal(err)
	}
	if Self() <= before {
		t.Errorf("a reaped child's CPU is not counted: %s before, %s after", before, Self())
	}
}
