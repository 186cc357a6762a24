package certify

import (
	"testing"

	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/target"
)

// TestNewReport_NamesTheBuild: a certification's report records the
// idemcheck build that ran it, from the binary's own build information.
func TestNewReport_NamesTheBuild(t *testing.T) {
	rep := newReport(&target.Target{Name: "t"}, Options{})
	if want := reports.CurrentTool(); rep.Tool != want || rep.Tool.Version == "" {
		t.Fatalf("report tool %+v, want the running build %+v", rep.Tool, want)
	}
}
