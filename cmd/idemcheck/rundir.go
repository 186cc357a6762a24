package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/idemcheck/idemcheck/internal/leftovers"
)

// LatestLink is the name of the link, beside a target's run folders, to
// the folder of its most recent run.
const LatestLink = "latest"

// newRunDir creates the report folder of one run under parent: a new
// folder named after the UTC start time (20261202-185501, then -2, -3 in
// the same second), so that a run never overwrites an earlier run's
// report, also when it is interrupted.
func newRunDir(parent string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	for n := 1; ; n++ {
		dir := filepath.Join(parent, stamp)
		if n > 1 {
			dir += fmt.Sprintf("-%d", n)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !os.IsExist(err) {
			return "", err
		}
	}
}

// pointLatest makes parent/latest a relative symbolic link to run, the
// folder of the run that just finished, replacing the previous link in
// one rename so that a reader never finds it missing.
func pointLatest(run string) error {
	parent := filepath.Dir(run)
	tmp := filepath.Join(parent, fmt.Sprintf(".%s.%d", LatestLink, os.Getpid()))
	os.Remove(tmp)
	if err := os.Symlink(filepath.Base(run), tmp); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(parent, LatestLink))
}

// reportDir is where a run's reports go: the --report-dir folder as
// given, or a new timestamped folder under idemcheck-report/<target>.
// The returned finish points the latest link at it once the reports are
// written (nothing to do for an explicit --report-dir).
func reportDir(explicit, parent string) (dir string, finish func() error, err error) {
	if explicit != "" {
		return explicit, func() error { return nil }, nil
	}
	dir, err = newRunDir(parent)
	if err != nil {
		return "", nil, &exitError{code: exitEnv, err: fmt.Errorf("report folder: %w", err)}
	}
	return dir, func() error { return pointLatest(dir) }, nil
}

// cleanLeftovers removes the temporary folders of earlier runs that were
// killed (SIGKILL leaves idemcheck-env-* and idemcheck-pg-* behind), and
// says so on stderr.
func cleanLeftovers(stderr io.Writer) {
	removed, err := leftovers.Clean(os.TempDir())
	if len(removed) > 0 {
		fmt.Fprintf(stderr, "idemcheck: removed %d temporary folders left by killed runs\n", len(removed))
	}
	if err != nil {
		fmt.Fprintf(stderr, "idemcheck: %v\n", err)
	}
}
