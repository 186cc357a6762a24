package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/search"
)

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay", "replay <incident.yaml> [--target <built-in | file.yaml>]",
		"idemcheck replay scenarios/incidents/concurrent-double-charge.yaml --target naive", stderr)
	tgt := fs.String("target", "", "target to replay against (default: the incident's own target)")
	out := fs.String("report-dir", "", "write the replayed history here")
	dbURL := fs.String("database-url", "", "use this PostgreSQL instead of a throwaway cluster")
	docker := fs.Bool("docker", false, "replay in containers, as certify --docker ran it (make images first)")
	var gateway gatewaySwitch
	gateway.register(fs)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		return usageErr("replay: expected an incident file first")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	sc, err := scenarios.LoadIncident(args[0])
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	name := *tgt
	if name == "" {
		if _, err := sc.Member(); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("%w (or pass --target)", err)}
		}
		name = sc.Target
	}
	tg, err := resolveTarget(name, *docker)
	if err != nil {
		return err
	}
	cleanLeftovers(stderr)
	opts := certify.Options{DatabaseURL: *dbURL, NoGatewayIdempotency: gateway.off}
	if *out != "" {
		opts.LogDir = filepath.Join(*out, reports.LogsDir)
	}
	if inDocker(*docker, tg) {
		opts.Launch, opts.Mode = dockerLauncher(), "docker"
	}
	ex, err := certify.Replay(ctx, tg, sc, opts)
	if err != nil {
		return &exitError{code: exitEnv, err: err}
	}
	printReplay(stdout, tg.Name, sc, ex)
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err == nil {
			ex.History.WriteFile(filepath.Join(*out, "history.json"))
		}
	}
	return replayExit(tg.Name, sc, ex)
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
