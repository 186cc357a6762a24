package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/history"
)

// TestFaultTitle_NamesTheForeignExample: a fault another example injected
// says so in the timeline, so a reader does not take it for the example's
// own.
func TestFaultTitle_NamesTheForeignExample(t *testing.T) {
	f := history.Fault{ID: 3, Name: "kill", Target: "replica0", Foreign: "rn17", Heal: time.Second, Healed: true}
	if got := faultTitle(f, time.Second); !strings.Contains(got, "foreign=rn17") {
		t.Errorf("tooltip %q does not name the example that injected the kill", got)
	}
	f.Foreign = ""
	if got := faultTitle(f, time.Second); strings.Contains(got, "foreign") {
		t.Errorf("tooltip %q of the example's own fault calls it foreign", got)
	}
}
