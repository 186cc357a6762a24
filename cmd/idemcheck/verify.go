package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/idemcheck/idemcheck/reports"
)

// runVerify recomputes a report.json's seal: exit 0 when the report is as
// the run wrote it, 1 naming the fields edited since (or without a
// seal), 2 for a file that is not a report. It also says whether this
// binary is the build the report names: a verdict is reproducible with
// that build.
func runVerify(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("verify", "verify <report.json or its directory>",
		"idemcheck verify idemcheck-report/reference/latest/report.json", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("verify: expected one report.json (or the directory that holds it)")
	}
	path := fs.Arg(0)
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, reports.JSONFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return usageErr("verify: %v", err)
	}
	v, err := reports.Verify(path, data)
	switch {
	case errors.Is(err, reports.ErrEdited), errors.Is(err, reports.ErrNoSeal):
		fmt.Fprintf(stdout, "%v\n", err)
		for _, f := range v.Edited {
			fmt.Fprintf(stdout, "  edited: %s\n", f)
		}
		return &exitError{code: exitFail, err: errSilent}
	case err != nil:
		return usageErr("verify: %v", err)
	}
	fmt.Fprintf(stdout, "%s: as written by the run (%s)\n", path, v.Digest)
	fmt.Fprintf(stdout, "  written by: idemcheck %s\n", v.Tool)
	switch cur := reports.CurrentTool(); {
	case cur.Commit == reports.Unknown || v.Tool.Commit == reports.Unknown:
		fmt.Fprintf(stdout, "  this binary (idemcheck %s) or the report records no commit: the builds cannot be compared\n", cur)
	case cur == v.Tool:
		fmt.Fprintln(stdout, "  this binary is the same build: its verdicts can be reproduced with it")
	default:
		fmt.Fprintf(stdout, "  this binary is another build (idemcheck %s): reproduce with the one above\n", cur)
	}
	if v.Seal.TargetSHA256 != "" {
		fmt.Fprintf(stdout, "  target file sha256: %s\n", v.Seal.TargetSHA256)
	}
	for _, img := range slices.Sorted(maps.Keys(v.Seal.Images)) {
		fmt.Fprintf(stdout, "  image %s: %s\n", img, v.Seal.Images[img])
	}
	return nil
}
