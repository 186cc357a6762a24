package certify

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/target"
)

func newReport(tg *target.Target, opts Options) *reports.Report {
	rep := &reports.Report{
		SchemaVersion: reports.SchemaVersion, Target: tg.Name, TargetFile: tg.File, Strict: opts.Strict,
		Seed: opts.Seed, Budget: reports.Duration(opts.Budget), Started: time.Now().UTC(), Mode: cmp.Or(opts.Mode, "process"),
		Replicas: tg.Replicas, Verdict: "unknown", Level: "L0", Tool: reports.CurrentTool(), Gateway: GatewayRecord(GatewayConfig(tg, opts.NoGatewayIdempotency)),
		Env:             map[string]string{"go": runtime.Version(), "os": runtime.GOOS + "/" + runtime.GOARCH},
		Counterexamples: map[string]*history.History{},
	}
	if opts.Replicas > 0 {
		rep.Replicas = opts.Replicas
	}
	if opts.ShardCount > 1 {
		rep.Shard = fmt.Sprintf("%d/%d", opts.ShardIndex, opts.ShardCount)
	}
	rep.Seal = &reports.Seal{}
	if tg.File != "" {
		if b, err := os.ReadFile(tg.File); err == nil {
			sum := sha256.Sum256(b)
			rep.Seal.TargetSHA256 = hex.EncodeToString(sum[:])
		}
	}
	return rep
}

// imaged is an environment that runs container images (container mode).
type imaged interface {
	Images(ctx context.Context) map[string]string
}

// sealImages records in the report's seal the images env runs, by id.
func sealImages(ctx context.Context, rep *reports.Report, env harness.Env) {
	if im, ok := env.(imaged); ok && rep.Seal != nil {
		rep.Seal.Images = im.Images(ctx)
	}
}

// finish sets the verdict. It runs in a defer, so a panic or an
// interrupted run still leaves a report that says so.
func finish(rep *reports.Report, start time.Time, ctx context.Context, err error) {
	if rep == nil {
		return
	}
	rep.Duration = reports.Duration(time.Since(start))
	rep.PeakRSS = PeakRSS()
	rep.Complete = err == nil && ctx.Err() == nil && len(rep.Families) > 0
	switch {
	case err != nil:
		rep.Interrupted = err.Error()
	case ctx.Err() != nil:
		rep.Interrupted = "interrupted: " + context.Cause(ctx).Error()
	}
	rep.Verdict = reports.OverallVerdict(rep)
}

// PeakRSS is the most memory this process has held resident, in bytes
// (getrusage's maxrss; 0 where it cannot be read).
func PeakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss * 1024 // kilobytes on Linux
}

// addFamily adds a family's checks and evidence to the report: the shrunk
// counterexample's violations, replayable from its incident file, and up
// to three examples of every other non-PASS check, replayable by seed;
// each violation carries the history of the example it was found in.
func addFamily(rep *reports.Report, fr *familyRun, res checker.Result) {
	shown := map[string]int{}
	if fr.fail != nil {
		rep.Counterexamples[fr.Name] = fr.fail.History
		replay := fmt.Sprintf("idemcheck replay %s --target %s", cmp.Or(fr.Incident, "<incident.yaml>"), targetArg(rep))
		for _, c := range fr.fail.Result.Checks {
			for _, v := range c.Violations {
				rep.Violations = append(rep.Violations, reports.Violation{Violation: v, Family: fr.Name, Replay: replay, History: fr.fail.History})
				shown[c.ID]++
			}
		}
	}
	for _, c := range res.Checks {
		rep.Checks = append(rep.Checks, checkRow(c, fr.Name))
	}
	replay := fmt.Sprintf("idemcheck run %s --target %s --seed %d", fr.Name, targetArg(rep), rep.Seed)
	for _, v := range fr.agg.kept() {
		if shown[v.Invariant] >= maxEvidence {
			continue
		}
		shown[v.Invariant]++
		v.Family, v.Replay = fr.Name, replay
		rep.Violations = append(rep.Violations, v)
	}
}

// targetArg is how a replay command names the target, with --docker when
// the run was in containers and --gateway-idempotency off when its gateway
// kept no keys.
func targetArg(rep *reports.Report) string {
	arg := cmp.Or(rep.TargetFile, rep.Target)
	if rep.Mode == "docker" {
		arg += " --docker"
	}
	if rep.Gateway.NoIdempotency {
		arg += " --gateway-idempotency off"
	}
	return arg
}

// addAccounting puts the accounting check in the report.
func addAccounting(rep *reports.Report, res checker.Result) {
	for _, c := range res.Checks {
		rep.Checks = append(rep.Checks, checkRow(c, "run"))
		for _, v := range c.Violations {
			rep.Violations = append(rep.Violations, reports.Violation{Violation: v, Family: "run"})
		}
	}
}

// checkRow is a check's row in the report: the one place a checker
// result becomes a report's check.
func checkRow(c checker.CheckResult, family string) reports.Check {
	return reports.Check{ID: c.ID, Name: c.Name, Family: family, Level: c.Level, Verdict: string(c.Verdict), Exercised: c.Exercised, Note: c.Note}
}
