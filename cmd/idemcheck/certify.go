package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/families"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/reports"
)

// certifyFlags are the flags of certify and run.
type certifyFlags struct {
	target      string
	families    string
	level       string
	seed        uint64
	budget      time.Duration
	replicas    int
	parallel    int
	reportDir   string
	strict      bool
	json        bool
	shard       string
	databaseURL string
	redisFsync  string
	docker      bool
	gateway     gatewaySwitch
	timeFaults  bool
	failFast    bool
	keep        string // --keep-histories
}

func (f *certifyFlags) register(fs *flag.FlagSet, withFamilies bool) {
	fs.StringVar(&f.target, "target", "", "built-in target name (see idemcheck list) or a target file `path`")
	if withFamilies {
		fs.StringVar(&f.families, "families", "", "comma-separated families (default: all but mixed)")
		fs.StringVar(&f.level, "level", "", "certify up to this level only (L1..L5): the families that level needs")
	}
	fs.Uint64Var(&f.seed, "seed", 1, "seed: the same seed replays the same scenarios and faults")
	fs.DurationVar(&f.budget, "budget", 50*time.Second, "total wall-time budget, set-up included; the families run at the same time")
	fs.IntVar(&f.replicas, "replicas", 0, "override the target's replica count")
	fs.IntVar(&f.parallel, "parallel", certify.DefaultParallel, "examples of one family in flight at once (families that mostly wait get 8x)")
	fs.StringVar(&f.reportDir, "report-dir", "", "where reports go (default idemcheck-report/<target>)")
	fs.BoolVar(&f.strict, "strict", false, "count NON-STRICT (safe but not what the IETF draft asks) as failure")
	fs.BoolVar(&f.json, "json", false, "print report.json to stdout instead of progress and summary")
	fs.StringVar(&f.shard, "shard", "", "`k/n`: run shard k of n disjoint seed ranges (nightly soak on n runners)")
	fs.StringVar(&f.databaseURL, "database-url", "", "use this PostgreSQL instead of a throwaway cluster")
	fs.StringVar(&f.redisFsync, "redis-appendfsync", "everysec", "a throwaway Redis's appendfsync, for needs: [redis]: always, everysec or no")
	fs.BoolVar(&f.docker, "docker", false, "run PostgreSQL, the gateway, toxiproxy and the replicas as local Docker images (make images first)")
	fs.BoolVar(&f.timeFaults, "time-faults", true, "let late-retry draw clock_skew and db_timezone on a replica (--time-faults=false: neither; see docs/targets.md)")
	fs.BoolVar(&f.failFast, "fail-fast", false, "stop every family at the first failure (the failing family still re-plays and shrinks it; the others end UNKNOWN): a quick red while fixing a server")
	fs.StringVar(&f.keep, "keep-histories", "", "write every history to `dir` as it is judged, one gzip-compressed JSON-lines file per family (<family>.jsonl.gz); none is held in memory for it")
	f.gateway.register(fs)
}

func newFlagSet(name, usage, example string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: idemcheck %s\n\nExample:\n  %s\n\nFlags:\n", usage, example)
		fs.PrintDefaults()
	}
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &exitError{code: exitPass, err: errSilent}
		}
		return &exitError{code: exitUsage, err: errSilent}
	}
	return nil
}

func runCertify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f certifyFlags
	fs := newFlagSet("certify", "certify --target <built-in | file.yaml> [flags]", "idemcheck certify --target reference --budget 60s --report-dir out/", stderr)
	f.register(fs, true)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("certify: unexpected argument %q (flags come as --name value)", fs.Arg(0))
	}
	fams, err := selectFamilies(f.families, f.level)
	if err != nil {
		return err
	}
	return certifyTarget(ctx, f, fams, stdout, stderr)
}

func runFamily(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f certifyFlags
	fs := newFlagSet("run", "run <family> --target <built-in | file.yaml> [flags]", "idemcheck run concurrent-duplicates --target naive --budget 20s", stderr)
	f.register(fs, false)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		return usageErr("run: expected a family name first, one of %s", strings.Join(families.FamilyNames(), ", "))
	}
	fams, err := families.Select(args[0])
	if err != nil {
		return usageErr("run: %v", err)
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	return certifyTarget(ctx, f, fams, stdout, stderr)
}

// selectFamilies resolves --families and --level, once: the families
// chosen are handed on as they are, never looked up by name again.
func selectFamilies(list, level string) ([]families.Family, error) {
	var fams []families.Family
	if list != "" {
		for _, n := range strings.Split(list, ",") {
			f, err := families.Select(strings.TrimSpace(n))
			if err != nil {
				return nil, usageErr("--families: %v", err)
			}
			fams = append(fams, f...)
		}
	}
	if level == "" {
		return fams, nil
	}
	if len(level) != 2 || level[0] != 'L' || level[1] < '1' || level[1] > '5' {
		return nil, usageErr("--level: expected L1 to L5, got %q", level)
	}
	if len(fams) == 0 {
		fams = families.Default()
	}
	var kept []families.Family
	for _, f := range fams {
		if f.Level <= level {
			kept = append(kept, f)
		}
	}
	return kept, nil
}

func parseShard(s string) (k, n int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 1 || k > n {
		return 0, 0, usageErr("--shard: expected k/n with 1 <= k <= n, got %q", s)
	}
	return k, n, nil
}

func certifyTarget(ctx context.Context, f certifyFlags, fams []families.Family, stdout, stderr io.Writer) error {
	k, n, err := parseShard(f.shard)
	if err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	played, err := f.gateway.played(fams)
	if err != nil {
		return err
	}
	tg, err := resolveTarget(f.target, f.docker)
	if err != nil {
		return err
	}
	if err := families.CheckFamilies(tg, played); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if err := installTarget(ctx, tg); err != nil {
		return err
	}
	dir, finish, err := reportDir(f.reportDir, filepath.Join("idemcheck-report", tg.Name))
	if err != nil {
		return err
	}
	cleanLeftovers(stderr)
	progress := newProgress(stderr, f.json)
	opts := certify.Options{
		Families: fams, Seed: f.seed, Budget: f.budget, Replicas: f.replicas, Parallel: f.parallel, Strict: f.strict,
		ShardIndex: k, ShardCount: n, ReportDir: dir, DatabaseURL: f.databaseURL, RedisAppendFsync: f.redisFsync, Progress: progress.update,
		LogDir: filepath.Join(dir, reports.LogsDir), NoGatewayIdempotency: f.gateway.off,
		NoTimeFaults: !f.timeFaults, FailFast: f.failFast, KeepHistories: f.keep,
		// The report so far, rewritten while the run goes on: a runner
		// killed by its CI limit leaves every violation found until then.
		Checkpoint: func(r *reports.Report) {
			if _, err := reports.WriteAll(dir, r); err != nil {
				fmt.Fprintf(stderr, "idemcheck: checkpoint to %s: %v\n", dir, err)
			}
			progress.checkpoint(r)
		},
	}
	if inDocker(f.docker, tg) {
		opts.Launch, opts.Mode = dockerLauncher(), "docker"
	}
	rep, runErr := certify.Run(ctx, tg, opts)
	progress.close()
	if rep == nil {
		return usageErr("%v", runErr)
	}
	paths, werr := reports.WriteAll(dir, rep)
	if werr != nil {
		fmt.Fprintf(stderr, "idemcheck: writing reports to %s: %v\n", dir, werr)
	}
	if err := finish(); err != nil {
		fmt.Fprintf(stderr, "idemcheck: %v\n", err)
	}
	exit := exitFor(rep, runErr)
	if f.json {
		reports.WriteJSON(stdout, rep)
	} else {
		printSummary(stdout, rep, paths, printsReason(exit))
	}
	return exit
}

// printsReason says whether an exit error will print its reason on stderr.
func printsReason(err error) bool {
	var ee *exitError
	return errors.As(err, &ee) && ee.err != nil && ee.err != errSilent
}

func exitFor(rep *reports.Report, runErr error) error {
	switch {
	case runErr != nil && errors.Is(runErr, certify.ErrEnvironment):
		return &exitError{code: exitEnv, err: runErr}
	case rep.Verdict == "fail":
		return &exitError{code: exitFail, err: errSilent}
	case runErr != nil:
		return &exitError{code: exitEnv, err: runErr}
	case rep.Verdict == "unknown" && rep.Interrupted != "":
		return &exitError{code: exitEnv, err: fmt.Errorf("could not decide: %s", rep.Interrupted)}
	case rep.Verdict == "unknown":
		return &exitError{code: exitEnv, err: errors.New("could not decide every check (UNKNOWN above): no violation was found, but that proves less than a PASS")}
	}
	return nil
}

// printSummary prints the verdict line, the non-PASS checks and where the
// reports are. When the run stopped on an error (errPrinted), the error
// goes to stderr once, with the exit code; the summary only points at it.
func printSummary(w io.Writer, rep *reports.Report, paths reports.Paths, errPrinted bool) {
	fmt.Fprintf(w, "%s: %s (level %s) in %s, seed %d\n", rep.Target, verdictWord(rep.Verdict), rep.Level, roundDur(rep.Duration), rep.Seed)
	printContact(w, rep.Contact)
	for _, fr := range rep.Families {
		line := fmt.Sprintf("  %-22s %-13s %4d scenarios", fr.Name, fr.Grade(), fr.Scenarios)
		if fr.Incident != "" {
			line += fmt.Sprintf("  shrunk to %d requests, %d faults: %s", fr.ShrunkRequests, fr.ShrunkFaults, fr.Incident)
		}
		fmt.Fprintln(w, line)
		if (fr.Verdict == "UNKNOWN" || fr.NotJudged) && fr.Note != "" {
			fmt.Fprintf(w, "    %s\n", fr.Note)
		}
	}
	for _, c := range rep.Checks {
		if c.Verdict == "PASS" {
			continue
		}
		fmt.Fprintf(w, "  %-13s %s %s [%s]\n", c.Verdict, c.ID, c.Name, c.Family)
		if c.Verdict == "UNKNOWN" && c.Note != "" {
			fmt.Fprintf(w, "    %s\n", c.Note)
		}
	}
	shown := map[string]bool{}
	for _, v := range rep.Violations {
		if shown[v.Invariant+v.Family] {
			continue
		}
		shown[v.Invariant+v.Family] = true
		fmt.Fprintf(w, "  %s: %s\n", v.Invariant, v.Explanation)
		if v.Replay != "" { // a run-wide finding (A1, T1) has no example to replay
			fmt.Fprintf(w, "    replay: %s\n", v.Replay)
		}
	}
	switch {
	case rep.Interrupted != "" && errPrinted:
		fmt.Fprintln(w, "  incomplete: the run stopped early (the reason is on stderr)")
	case rep.Interrupted != "":
		fmt.Fprintf(w, "  incomplete: %s\n", rep.Interrupted)
	}
	if paths.HTML != "" {
		fmt.Fprintf(w, "  report: %s\n", paths.HTML)
	}
}

// printContact prints first contact's checklist when it stopped the run,
// and otherwise the trace money was followed by when it is not the
// charge protocol's own (metadata[order_id]).
func printContact(w io.Writer, c *reports.Contact) {
	switch {
	case c == nil:
	case c.Blocked():
		fmt.Fprintln(w, "  first contact stopped the run: every check would judge the misconfiguration, not the server")
		var b strings.Builder
		c.WriteText(&b)
		for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			fmt.Fprintln(w, "    "+line)
		}
	case c.Trace != gatewaysim.DefaultTrace.String():
		found := ""
		if c.TraceFound {
			found = " (found at first contact)"
		}
		fmt.Fprintf(w, "  money traced by %s%s\n", c.Trace, found)
	}
}

func roundDur(d reports.Duration) time.Duration {
	return time.Duration(d).Round(100 * time.Millisecond)
}
