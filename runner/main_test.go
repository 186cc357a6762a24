package runner_test

import (
	"testing"

	"github.com/idemcheck/idemcheck/harness/harnesstest"
)

// TestMain removes the test server binary the runner tests build.
func TestMain(m *testing.M) { harnesstest.Main(m) }
