package certify_test

import (
	"testing"

	"github.com/idemcheck/idemcheck/harness/harnesstest"
)

// TestMain removes the test server binary the reconciliation test builds.
func TestMain(m *testing.M) { harnesstest.Main(m) }
