package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/idemcheck/idemcheck/reports"
)

// runVersion prints the build this binary is, the same values every
// report.json records as its tool: a team that pins idemcheck in CI can
// see which commit certified its server, and whether that binary was
// built from a modified tree.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version [--json]", "idemcheck version --json", stderr)
	asJSON := fs.Bool("json", false, "print the build as JSON (the tool object of report.json)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("version: unexpected argument %q", fs.Arg(0))
	}
	tool := reports.CurrentTool()
	if *asJSON {
		return printJSON(stdout, tool)
	}
	printTool(stdout, tool)
	return nil
}

// printTool writes the build one value a line; what the binary did not
// record is "unknown", with the reason once.
func printTool(w io.Writer, t reports.Tool) {
	fmt.Fprintf(w, "idemcheck %s\n", t.Version)
	commit, modified := reports.Unknown, reports.Unknown
	if t.Commit != reports.Unknown {
		commit = t.ShortCommit() + " (" + t.Commit + ")"
		modified = "no"
		if t.Modified {
			modified = "yes: built from a tree with uncommitted changes"
		}
	}
	fmt.Fprintf(w, "  commit:      %s\n", commit)
	fmt.Fprintf(w, "  modified:    %s\n", modified)
	fmt.Fprintf(w, "  commit time: %s\n", t.CommitTime)
	fmt.Fprintf(w, "  go:          %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if t.Commit == reports.Unknown {
		fmt.Fprintln(w, "This binary carries no version control information: it was built outside a git checkout, in a git")
		fmt.Fprintln(w, "worktree, with -buildvcs=false, or by go install from a module download. `make build` in a clone records it.")
	}
}
