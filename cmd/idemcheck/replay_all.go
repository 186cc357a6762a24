package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// all replays every incident file under dir, each against tgt or, when
// tgt is empty, against the built-in member it names; one line per
// incident, then a summary. Every file is loaded, and every target
// resolved, before the first replay starts.
func (r replayer) all(ctx context.Context, dir, tgt string, stdout, stderr io.Writer) error {
	incs, err := scenarios.LoadIncidentDir(dir, tgt == "")
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if len(incs) == 0 {
		return usageErr("replay --all %s: no incident files (*.yaml) there", dir)
	}
	targets := make([]*target.Target, len(incs))
	for i, in := range incs {
		if targets[i], err = r.target(in.Scenario, tgt); err != nil {
			return err
		}
	}
	cleanLeftovers(stderr)
	var t tally
	for i, in := range incs {
		code, line, failed := r.verdict(ctx, targets[i], in, stderr)
		t.add(code)
		fmt.Fprintf(stdout, "%-15s %-12s %-62s %s\n", line, failed, in.File, source(in))
	}
	fmt.Fprintln(stdout, t.summary(len(incs), tgt))
	if tgt == "" {
		fmt.Fprintf(stdout, "replay one alone: idemcheck replay %s\n", filepath.Join(dir, "<file>"))
	}
	return t.exit()
}

// verdict replays one incident and says what it showed: against its own
// member whether it reproduced, against another target its verdict; and
// the checks that failed, either way.
func (r replayer) verdict(ctx context.Context, tg *target.Target, in scenarios.Incident, stderr io.Writer) (code int, line, failed string) {
	out := ""
	if r.out != "" {
		out = filepath.Join(r.out, strings.TrimSuffix(in.File, filepath.Ext(in.File)))
	}
	ex, err := r.replay(ctx, tg, in.Scenario, out)
	if err != nil {
		fmt.Fprintf(stderr, "idemcheck: %s: %v\n", in.File, err)
		return exitEnv, "UNKNOWN", "-"
	}
	code = codeOf(replayExit(tg.Name, in.Scenario, ex))
	failed = strings.Join(failedChecks(ex.Result), ",")
	if failed == "" {
		failed = "-"
	}
	switch {
	case tg.Name == in.Scenario.Target && code == exitNotReproduced:
		return code, "NOT reproduced", failed
	case tg.Name == in.Scenario.Target && code != exitEnv:
		return code, "reproduced", failed
	}
	return code, string(ex.Result.Verdict), failed
}

func failedChecks(r checker.Result) []string {
	var ids []string
	for _, c := range r.Checks {
		if c.Verdict == checker.Failed {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

func source(in scenarios.Incident) string {
	if in.Scenario.Source == "" {
		return "(" + in.Scenario.Target + ")"
	}
	return "(" + in.Scenario.Target + ", " + in.Scenario.Source + ")"
}

// tally counts replay --all's outcomes by exit code.
type tally map[int]int

func (t *tally) add(code int) {
	if *t == nil {
		*t = tally{}
	}
	(*t)[code]++
}

func (t tally) summary(n int, tgt string) string {
	if tgt == "" {
		return fmt.Sprintf("%d of %d incidents reproduced against their own members (%d not reproduced, %d undecided)",
			t[exitPass]+t[exitFail], n, t[exitNotReproduced], t[exitEnv])
	}
	return fmt.Sprintf("%d incidents against %s: %d FAILED, %d passed, %d undecided", n, tgt, t[exitFail], t[exitPass], t[exitEnv])
}

func (t tally) exit() error {
	worst := exitPass
	for code := range t {
		if slices.Index(exitRank, code) > slices.Index(exitRank, worst) {
			worst = code
		}
	}
	switch worst {
	case exitPass:
		return nil
	case exitFail:
		return &exitError{code: exitFail, err: errSilent}
	}
	return &exitError{code: worst, err: fmt.Errorf("%d of %d incidents %s", t[worst], t.total(), map[int]string{exitEnv: "could not be decided", exitNotReproduced: "did not reproduce"}[worst])}
}

func (t tally) total() int {
	n := 0
	for _, c := range t {
		n += c
	}
	return n
}
