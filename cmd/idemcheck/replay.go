package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/search"
	"github.com/idemcheck/idemcheck/target"
)

// replayer holds what every replay of one command shares: where it runs
// and where it writes.
type replayer struct {
	docker bool
	opts   certify.Options
	out    string // --report-dir; "" writes nothing
}

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay", "replay <incident.yaml> [--target <built-in | file.yaml>]\n       idemcheck replay --all <dir> [--target <built-in | file.yaml>]",
		"idemcheck replay scenarios/incidents/concurrent-double-charge.yaml --target naive\n  idemcheck replay --all scenarios/incidents/ --target ./my.yaml", stderr)
	all := fs.Bool("all", false, "replay every incident file under the directory given (own and public/), one verdict each and a summary")
	tgt := fs.String("target", "", "target to replay against (default: the incident's own target)")
	out := fs.String("report-dir", "", "write the replayed history here")
	dbURL := fs.String("database-url", "", "use this PostgreSQL instead of a throwaway cluster")
	docker := fs.Bool("docker", false, "replay in containers, as certify --docker ran it (make images first)")
	var gateway gatewaySwitch
	gateway.register(fs)
	args = positionalFirst(args, "all")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		return usageErr("replay: expected an incident file first (or --all and a directory)")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	r := replayer{docker: *docker, out: *out, opts: certify.Options{DatabaseURL: *dbURL, NoGatewayIdempotency: gateway.off}}
	if *all {
		return r.all(ctx, args[0], *tgt, stdout, stderr)
	}
	return r.one(ctx, args[0], *tgt, stdout, stderr)
}

// positionalFirst moves boolean flags written before the positional
// argument (replay --all dir) behind it, where the rest of the flags are
// parsed.
func positionalFirst(args []string, bools ...string) []string {
	var flags []string
	for len(args) > 0 && slices.ContainsFunc(bools, func(b string) bool { return args[0] == "-"+b || args[0] == "--"+b }) {
		flags, args = append(flags, args[0]), args[1:]
	}
	if len(args) == 0 {
		return flags
	}
	return append(append([]string{args[0]}, flags...), args[1:]...)
}

func (r replayer) one(ctx context.Context, file, tgt string, stdout, stderr io.Writer) error {
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		return usageErr("replay: %s is a directory: replay --all %s replays every incident file in it", file, file)
	}
	sc, err := scenarios.LoadIncident(file)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	tg, err := r.target(sc, tgt)
	if err != nil {
		return err
	}
	if err := installTarget(ctx, tg); err != nil {
		return err
	}
	cleanLeftovers(stderr)
	ex, err := r.replay(ctx, tg, sc, r.out)
	if err != nil {
		return &exitError{code: exitEnv, err: err}
	}
	printReplay(stdout, tg.Name, sc, ex)
	return replayExit(tg.Name, sc, ex)
}

// target resolves what an incident replays against: the --target given,
// else the built-in member the incident names.
func (r replayer) target(sc *scenarios.Scenario, tgt string) (*target.Target, error) {
	if tgt == "" {
		if _, err := sc.Member(); err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%w (or pass --target)", err)}
		}
		tgt = sc.Target
	}
	return resolveTarget(tgt, r.docker)
}

// replay plays one incident against tg, writing its history into dir.
func (r replayer) replay(ctx context.Context, tg *target.Target, sc *scenarios.Scenario, dir string) (*search.Example, error) {
	opts := r.opts
	if dir != "" {
		opts.LogDir = filepath.Join(dir, reports.LogsDir)
	}
	if inDocker(r.docker, tg) {
		opts.Launch, opts.Mode = dockerLauncher(), "docker"
	}
	ex, err := certify.Replay(ctx, tg, sc, opts)
	if err == nil && dir != "" {
		if err := os.MkdirAll(dir, 0o755); err == nil {
			ex.History.WriteFile(filepath.Join(dir, "history.json"))
		}
	}
	return ex, err
}

// replayExit is replay's exit code. Against the incident's own target the
// question is "does it still reproduce?": an expectation that did not hold
// is exit 4 (exitNotReproduced), never 0, so a nightly regression job
// cannot mistake a vanished bug, or a replay that went elsewhere, for a
// pass. Otherwise, and when it reproduced, the verdict decides as for
// certify: 1 when a check FAILED, 3 when it could not be decided
// (an incomplete history, a question left open), never 0.
func replayExit(target string, sc *scenarios.Scenario, ex *search.Example) error {
	r := ex.Result
	if target == sc.Target && len(certify.Mismatches(ex)) > 0 {
		return &exitError{code: exitNotReproduced, err: fmt.Errorf("%s: not reproduced against %s (expected verdicts listed above)", sc.Name, target)}
	}
	switch {
	case r.Failed():
		return &exitError{code: exitFail, err: errSilent}
	case !r.Verdict.Acceptable():
		return &exitError{code: exitEnv, err: fmt.Errorf("could not decide: the replay ended %s", r.Verdict)}
	}
	return nil
}

func printReplay(w io.Writer, target string, sc *scenarios.Scenario, ex *search.Example) {
	fmt.Fprintf(w, "replayed %s against %s: %s (level %s), %d requests, %d charges, %s\n", sc.Name, target, ex.Result.Verdict, ex.Result.Level, len(ex.History.Ops), len(ex.History.Charges), ex.Took.Round(1e6))
	if ex.Err != nil {
		fmt.Fprintf(w, "  could not play to the end: %v\n", ex.Err)
	}
	for _, c := range ex.Result.Checks {
		if c.Verdict == checker.Pass {
			continue
		}
		fmt.Fprintf(w, "  %-13s %s %s\n", c.Verdict, c.ID, c.Name)
		for _, v := range c.Violations {
			fmt.Fprintf(w, "    %s\n", v.Explanation)
		}
		if c.Verdict == checker.Unknown && c.Note != "" {
			fmt.Fprintf(w, "    %s\n", c.Note)
		}
	}
	if target != sc.Target {
		return
	}
	if miss := certify.Mismatches(ex); len(miss) > 0 {
		fmt.Fprintf(w, "  NOT reproduced: %s\n", strings.Join(miss, "; "))
	} else {
		fmt.Fprintln(w, "  reproduced: every expected verdict holds")
	}
}

// exitRank orders replay --all's exit codes: the code of the worst
// incident wins. Not reproduced outranks everything (a regression job
// must see it); undecided outranks FAILED, as in certify, so an incident
// that could not be played is never hidden behind another's verdict.
var exitRank = []int{exitPass, exitFail, exitEnv, exitNotReproduced}

func codeOf(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitPass
}
