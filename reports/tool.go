package reports

import (
	"runtime/debug"
)

// Unknown is what Tool says for a value the build did not record, in
// words rather than an empty string, so a reader cannot mistake it for a
// value that was left out by accident.
const Unknown = "unknown"

// Tool is the idemcheck build that wrote a report, as `idemcheck version`
// prints it: a verdict is only reproducible with the build that reached
// it, and a red night should show whether the server or the tool changed.
// It comes from the Go toolchain's build information (ToolOf), not from a
// number kept by hand, so it cannot drift from the source it names.
type Tool struct {
	// Version is the main module's version: a release tag ("v0.2.0"), a
	// pseudo-version naming the commit ("v0.0.0-20261203…-13e509f18cb7",
	// "+dirty" when the tree was modified), or Unknown.
	Version string `json:"version"`
	// Commit is the full revision the binary was built from, or Unknown.
	Commit string `json:"commit"`
	// Modified is true when the tree had uncommitted changes; false when it
	// had none or Commit is Unknown.
	Modified bool `json:"modified"`
	// CommitTime is the commit's time (RFC 3339), or Unknown. Go records
	// no build clock, which keeps builds reproducible; the commit's time
	// dates the source instead.
	CommitTime string `json:"commit_time"`
}

// CurrentTool is the running binary's Tool (ToolOf its build
// information); every field Unknown when the binary carries none.
func CurrentTool() Tool {
	info, _ := debug.ReadBuildInfo()
	return ToolOf(info)
}

// ToolOf reads a Tool from Go build information: the main module's
// version and the vcs.revision, vcs.modified and vcs.time settings that
// `go build` stamps in a version-control checkout. A binary built outside
// one (or in a git worktree, or with -buildvcs=false) has no vcs settings
// and a "(devel)" version; those fields are Unknown.
func ToolOf(info *debug.BuildInfo) Tool {
	t := Tool{Version: Unknown, Commit: Unknown, CommitTime: Unknown}
	if info == nil {
		return t
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		t.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			t.Commit = s.Value
		case "vcs.time":
			t.CommitTime = s.Value
		case "vcs.modified":
			t.Modified = s.Value == "true"
		}
	}
	return t
}

// ShortCommit is the commit's first twelve characters, as Go's
// pseudo-versions abbreviate it, or Unknown.
func (t Tool) ShortCommit() string {
	if len(t.Commit) > 12 {
		return t.Commit[:12]
	}
	return t.Commit
}

// String is the build in one phrase for the reports:
// "v0.0.0-… (commit 13e509f18cb7, modified)", or "unknown" for a binary
// that recorded nothing.
func (t Tool) String() string {
	if t.Version == "" { // a report written before reports named their tool
		return Unknown
	}
	if t.Commit == Unknown || t.Commit == "" {
		return t.Version
	}
	s := t.Version + " (commit " + t.ShortCommit()
	if t.Modified {
		s += ", modified"
	}
	return s + ")"
}
