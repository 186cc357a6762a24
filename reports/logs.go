package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/idemcheck/idemcheck/internal/boundedlog"
)

// LogsDir is the folder, inside a report folder, where a run keeps the
// logs of its replicas and environment (replica0.log, toxiproxy.log).
const LogsDir = "logs"

// logTailLines is how much of each log the HTML report shows; the whole
// file is beside it.
const logTailLines = 40

// LogFile is one log kept with a report: its path relative to the report
// folder and its last lines.
type LogFile struct {
	File string `json:"file"` // "logs/replica0.log"
	Tail string `json:"tail"` // the last lines, for the HTML report
	// Dropped is how many bytes the log dropped between its head and its
	// tail (internal/boundedlog): a log keeps both, whatever the run's
	// length.
	Dropped int64 `json:"dropped,omitempty"`
}

// collectLogs lists the *.log files under dir/LogsDir with their tails,
// sorted by name; none when the folder does not exist.
func collectLogs(dir string) []LogFile {
	paths, _ := filepath.Glob(filepath.Join(dir, LogsDir, "*.log"))
	var out []LogFile
	for _, p := range paths {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			continue
		}
		data, _ := os.ReadFile(p)
		out = append(out, LogFile{File: filepath.ToSlash(rel), Tail: tail(data, logTailLines), Dropped: boundedlog.DroppedIn(data)})
	}
	return out
}

// tail returns the last n lines of a log, each clipped.
func tail(data []byte, n int) string {
	if len(data) == 0 {
		return ""
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	lines = lines[max(0, len(lines)-n):]
	for i, l := range lines {
		lines[i] = clip(l, 400)
	}
	return strings.Join(lines, "\n")
}
