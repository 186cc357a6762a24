package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/idemcheck/idemcheck/reports"
)

// runMerge combines shard reports (certify --shard k/n on n runners) into
// one report directory; its exit code is the merged verdict's.
func runMerge(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("merge", "merge --report-dir OUT <shard report dir>...",
		"idemcheck merge --report-dir report shard-1 shard-2 shard-3", stderr)
	out := fs.String("report-dir", "idemcheck-report/merged", "where the merged reports go")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("merge: expected one or more report directories (each with a report.json)")
	}
	var reps []*reports.Report
	for _, dir := range fs.Args() {
		r, err := reports.ReadDir(dir)
		if err != nil {
			return usageErr("merge: %v", err)
		}
		reps = append(reps, r)
	}
	merged, err := reports.Merge(reps...)
	if err != nil {
		return usageErr("%v", err)
	}
	paths, err := reports.WriteAll(*out, merged)
	if err != nil {
		return &exitError{code: exitEnv, err: err}
	}
	fmt.Fprintf(stdout, "%s: %s (level %s) over %d shards: %s\n", merged.Target, verdictWord(merged.Verdict), merged.Level, len(reps), strings.Join(fs.Args(), ", "))
	fmt.Fprintf(stdout, "  report: %s\n", paths.HTML)
	return exitFor(merged, nil)
}
