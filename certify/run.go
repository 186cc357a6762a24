// Package certify runs the conformance families against a target and
// turns what they found into a report. It is the one implementation behind
// `idemcheck certify`, `idemcheck run`, the ginkgo conformance suite and
// the zoo's self-validation test.
package certify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/contact"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/runner"
	"github.com/idemcheck/idemcheck/target"
)

// ErrEnvironment wraps every failure to set up the environment (the SUT
// would not start, PostgreSQL is missing): exit code 3, verdict unknown.
var ErrEnvironment = errors.New("environment could not be set up")

// Options are a certification run's knobs. A run is a function of
// (target, Families, Seed, Budget, Shard).
type Options struct {
	Families     []families.Family // resolved once (families.Select); default families.Default()
	Seed         uint64            // default 1
	Budget       time.Duration     // wall time, set-up included (but see BudgetFromReady); the families run at the same time; default 60s
	ShrinkBudget time.Duration     // per failing family; default the time left, at least 3s, at most 20s
	Parallel     int               // examples in flight per family (DefaultParallel); families that mostly wait get more
	Replicas     int               // override the target's replica count
	Strict       bool              // NON-STRICT counts as a failure
	ShardIndex   int               // 1-based; with ShardCount, seeds are split across runners
	ShardCount   int
	ReportDir    string // where incident files of counterexamples go ("" = none written)
	DatabaseURL  string
	// RedisAppendFsync is the throwaway Redis's appendfsync (always,
	// everysec, no; "" = everysec, as deployments run it).
	RedisAppendFsync string
	Log              *slog.Logger
	Progress         func(Progress) // called for one example at a time, from any goroutine
	Env              harness.Env    // reuse a running environment instead of starting one
	// Launch starts the environment; default process.Launch. Container
	// mode passes docker.Launch, and Mode says which ("process" or "docker").
	Launch harness.Launcher
	Mode   string
	// BudgetFromReady counts Budget from when the environment is ready
	// and the server first answered, not from the start: the
	// self-validation's, whose zoo members must fail within a budget of
	// examples however long a loaded machine took to start PostgreSQL and
	// the replicas. The command line's budget always includes set-up.
	BudgetFromReady bool
	// LogDir keeps the replicas' and the environment's logs (replicaN.log,
	// toxiproxy.log) after the run, so errors can name a file that still
	// exists; "" = a temporary folder, removed at the end.
	LogDir string
	// NoGatewayIdempotency runs the gateway without idempotency, like a
	// provider that ignores Idempotency-Key (--gateway-idempotency off):
	// families that crash servers are not judged (crashesNotJudged).
	NoGatewayIdempotency bool
	// NoTimeFaults stops late-retry drawing clock_skew and db_timezone
	// (--time-faults=false; see families.drawClockFaults).
	NoTimeFaults bool
	// FailFast stops every other family at the first failing example
	// (--fail-fast): the failing family still re-plays and shrinks its
	// failure; the others end where they are, the checks they decide
	// UNKNOWN unless they failed too, and the run skips its settle time.
	FailFast bool
	// Checkpoint, when set, is handed the report so far (marked
	// incomplete) every CheckpointEvery (default DefaultCheckpointEvery)
	// while the families run, to be written where the final report will
	// be: a killed runner leaves its evidence.
	Checkpoint      func(*reports.Report)
	CheckpointEvery time.Duration
	// KeepHistories, when set, is a folder where every history is written
	// as it is judged, one gzip-compressed JSON-lines file per family
	// (<family>.jsonl.gz; --keep-histories): the run holds none of them in
	// memory for it.
	KeepHistories string
}

// Progress is reported after every example, for progress bars.
type Progress struct {
	Family     string
	Examples   int
	Violations int
	Elapsed    time.Duration
	Budget     time.Duration
	Done       bool
}

func (o *Options) defaults() {
	if len(o.Families) == 0 {
		o.Families = families.Default()
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Budget <= 0 {
		o.Budget = 60 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = DefaultCheckpointEvery
	}
	if o.ShardCount <= 0 {
		o.ShardIndex, o.ShardCount = 1, 1
	}
	if p := o.Progress; p != nil {
		// Families and examples run at once; the callback sees one
		// report at a time.
		var mu sync.Mutex
		o.Progress = func(pr Progress) {
			mu.Lock()
			defer mu.Unlock()
			p(pr)
		}
	}
}

// Run certifies tg. It always returns a report, also on error and on
// interruption (ctx cancelled): Complete says whether the run finished.
func Run(ctx context.Context, tg *target.Target, opts Options) (rep *reports.Report, err error) {
	opts.defaults()
	if in := *tg; opts.NoTimeFaults || opts.Mode == "docker" {
		in.NoTimeFaults = in.NoTimeFaults || opts.NoTimeFaults
		in.Containers = in.Containers || opts.Mode == "docker"
		tg = &in
	}
	rep = newReport(tg, opts)
	start := time.Now()
	defer func() { finish(rep, start, ctx, err) }()
	env, closeEnv, err := environment(ctx, tg, opts)
	if err != nil {
		return rep, err
	}
	defer closeEnv()
	sealImages(ctx, rep, env)
	// Every fault operation from here on passes through the guard, which
	// proves the harness untouched at each (T1).
	guard := harness.NewGuard(env)
	defer guard.Stop()
	env = guard
	if tg, rep.Contact, err = firstContact(ctx, tg, env, time.Since(start)); err != nil {
		return rep, err
	}
	c := newCertification(tg, env, rep, start, opts)
	if err := c.keepHistories(); err != nil {
		return rep, err
	}
	defer c.closeKept()
	// A soak lets go of an example's history once no late charge of a
	// correct server can come for it.
	c.runner.Ledger().SetRetain(retainOf(tg.Policy.RecoveryWindow))
	defer c.runner.Close()
	// The families run at the same time, each until the budget is spent:
	// a family that waits (TTLs, recovery windows) is not starved by a
	// slice of the budget, and its waits overlap the others' work.
	stopWatch := c.watchLate(ctx)
	stopCheckpoints := c.checkpoints(ctx)
	ctxs := make([]context.Context, len(c.families))
	for i, fr := range c.families {
		ctxs[i], fr.stop = context.WithCancelCause(ctx)
	}
	var wg sync.WaitGroup
	for i, fr := range c.families {
		wg.Go(func() { defer fr.stop(nil); c.runFamily(ctxs[i], fr) })
	}
	wg.Wait()
	stopCheckpoints()
	// A run that ends before its budget lets the server's recovery
	// window pass (within the budget) with the watch on: money the server
	// moves after its last example (a sweeper, an outbox) is judged too.
	// A run stopped at its first failure (FailFast) is FAILED already.
	if ctx.Err() == nil && c.stoppedBy == "" {
		settle(ctx, tg, c.deadline)
	}
	stopWatch()
	acct, err := c.account(ctx)
	if err != nil {
		return rep, err
	}
	c.report(acct, untouched(ctx, guard))
	return rep, nil
}

// certification is one run's state, owned here: the runner, one record
// per family (built once, in table order, found by name only for a late
// charge, whose history names its family), and the report they fill.
type certification struct {
	tg       *target.Target
	opts     Options
	rep      *reports.Report
	runner   *runner.Runner
	families []*familyRun
	byName   map[string]*familyRun
	setup    time.Duration // environment start-up, part of the budget (0 with BudgetFromReady)
	deadline time.Time
	// hard is when the run's last example must end: the budget, plus
	// Overrun less endReserve, for confirming the failure found last.
	hard time.Time
	// stoppedBy names the family whose failure stopped the others
	// (Options.FailFast), once (failFast).
	failFast  sync.Once
	stoppedBy string
}

// errFailFast is the cause of a family stopped by another's failure.
var errFailFast = errors.New("stopped at another family's failure (--fail-fast)")

// stopOthers stops every family but failed, the first to fail, with
// Options.FailFast.
func (c *certification) stopOthers(failed *familyRun) {
	c.failFast.Do(func() {
		c.stoppedBy = failed.Name
		for _, fr := range c.families {
			if fr != failed {
				fr.stop(errFailFast)
			}
		}
	})
}

func newCertification(tg *target.Target, env harness.Env, rep *reports.Report, start time.Time, opts Options) *certification {
	setup := time.Since(start)
	if opts.BudgetFromReady {
		start, setup = time.Now(), 0 // no set-up counted against the budget
	}
	c := &certification{tg: tg, opts: opts, rep: rep, byName: map[string]*familyRun{},
		setup:    setup,
		deadline: start.Add(opts.Budget), hard: start.Add(opts.Budget + Overrun - endReserve)}
	c.runner = runner.New(runner.Config{Env: env, Target: tg, Log: opts.Log, RunID: runID(), StopEarly: checker.MovedMoneyWrongly, Gate: runner.NewGate(),
		Gateway: GatewayRecord(GatewayConfig(tg, opts.NoGatewayIdempotency)),
		// An example the gate or a crash wave stretched sends no probe
		// past the budget: it ends with what it played, and the time past
		// the budget is left to the tail (a request held at the gate, a
		// heal, a convergence) and to confirming a failure found late.
		StopProbing: c.deadline,
		// An example still in flight at the hard end (held at the gate, a
		// relaunch waiting for a wave's recovery, a confirmation's step)
		// is cut there and not judged: the run ends on time.
		HardEnd: c.hard,
	})
	for i, fam := range opts.Families {
		fr := &familyRun{fam: fam, index: i, agg: &aggregate{start: time.Now()}, FamilyResult: reports.FamilyResult{Name: fam.Name, Level: fam.Level}}
		c.families = append(c.families, fr)
		c.byName[fam.Name] = fr
	}
	return c
}

// report writes every family's result, its incident file, the run's
// accounting and its proof that the harness was untouched (T1) into the
// report, and grants the level.
func (c *certification) report(acct, untouched checker.Result) {
	results := []checker.Result{acct, untouched}
	for _, fr := range c.families {
		if err := writeIncident(c.opts.ReportDir, c.rep, fr); err != nil {
			c.opts.Log.Warn("incident file not written", "family", fr.Name, "err", err)
		}
		res := fr.result()
		fr.Ops = res.Coverage.Ops
		fr.SetPace()
		c.rep.Families = append(c.rep.Families, fr.FamilyResult)
		addFamily(c.rep, fr, res)
		results = append(results, res)
	}
	addAccounting(c.rep, acct)
	addAccounting(c.rep, untouched)
	if untouched.Verdict == checker.Failed {
		c.rep.Untrusted = checker.Untrusted
	}
	merged := checker.Merge(results...)
	c.rep.Level, c.rep.LevelNote, c.rep.Coverage = merged.Level, merged.LevelNote, merged.Coverage
}

// ErrFirstContact is a run stopped at first contact: the server could
// not be reached through the gateway, or its money could not be traced,
// so every check would judge the misconfiguration. It is an
// ErrEnvironment (exit 3), never a FAILED check.
var ErrFirstContact = fmt.Errorf("%w: first contact", ErrEnvironment)

// firstContact makes first contact with the server (package contact)
// and returns the target to play against, tg with the trace first
// contact found (the gateway follows it from now on), and the checklist.
func firstContact(ctx context.Context, tg *target.Target, env harness.Env, ready time.Duration) (*target.Target, *reports.Contact, error) {
	c := contact.Run(ctx, tg, env, ready)
	if it, blocked := c.Blocking(); blocked {
		return tg, c, fmt.Errorf("%w: %s: %s", ErrFirstContact, it.Check, it.Detail)
	}
	if c.TraceFound {
		in := *tg
		in.Protocol.Trace = c.Trace
		tg = &in
	}
	return tg, c, nil
}

func environment(ctx context.Context, tg *target.Target, opts Options) (harness.Env, func(), error) {
	if opts.Env != nil {
		return opts.Env, func() {}, nil
	}
	launch := opts.Launch
	if launch == nil {
		launch = process.Launch
	}
	env, err := launch(ctx, tg, harness.Options{DatabaseURL: opts.DatabaseURL, RedisAppendFsync: opts.RedisAppendFsync, Logger: opts.Log, Replicas: opts.Replicas, WorkDir: opts.LogDir,
		Gateway: GatewayConfig(tg, opts.NoGatewayIdempotency)})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrEnvironment, err)
	}
	return env, func() { env.Close() }, nil
}

func runID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}
