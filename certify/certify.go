// Package certify runs the conformance families against a target and
// turns what they found into a report. It is the one implementation behind
// `idemcheck certify`, `idemcheck run`, the ginkgo conformance suite and
// the zoo's self-validation test.
package certify

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/ledger"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/runner"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/search"
	"github.com/idemcheck/idemcheck/target"
)

// ErrEnvironment wraps every failure to set up the environment (the SUT
// would not start, PostgreSQL is missing): exit code 3, verdict unknown.
var ErrEnvironment = errors.New("environment could not be set up")

// Options are a certification run's knobs. A run is a function of
// (target, Families, Seed, Budget, Shard).
type Options struct {
	Families     []string      // default: every family but mixed
	Seed         uint64        // default 1
	Budget       time.Duration // wall time, set-up included; the families run at the same time; default 60s
	ShrinkBudget time.Duration // per failing family; default the time left, at least 3s, at most 20s
	Parallel     int           // examples in flight per family (DefaultParallel); families that mostly wait get more
	Replicas     int           // override the target's replica count
	Strict       bool          // NON-STRICT counts as a failure
	ShardIndex   int           // 1-based; with ShardCount, seeds are split across runners
	ShardCount   int
	ReportDir    string // where incident files of counterexamples go ("" = none written)
	DatabaseURL  string
	Log          *slog.Logger
	Progress     func(Progress) // called for one example at a time, from any goroutine
	Env          harness.Env    // reuse a running environment instead of starting one
	// Launch starts the environment; default process.Launch. Container
	// mode passes docker.Launch, and Mode says which ("process" or "docker").
	Launch harness.Launcher
	Mode   string
	// LogDir keeps the replicas' and the environment's logs (replicaN.log,
	// toxiproxy.log) after the run, so errors can name a file that still
	// exists; "" = a temporary folder, removed at the end.
	LogDir string
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

// DefaultFamilies are certified when none are named: a composite family
// (mixed, the nightly soak of the same generators) adds time, not
// coverage.
func DefaultFamilies() []string {
	var names []string
	for _, f := range families.Families {
		if !f.Composite {
			names = append(names, f.Name)
		}
	}
	return names
}

func (o *Options) defaults() {
	if len(o.Families) == 0 {
		o.Families = DefaultFamilies()
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
	fams, err := resolveFamilies(opts.Families)
	if err != nil {
		return nil, err
	}
	rep = newReport(tg, opts)
	start := time.Now()
	defer func() { finish(rep, start, ctx, err) }()
	env, closeEnv, err := environment(ctx, tg, opts)
	if err != nil {
		return rep, err
	}
	defer closeEnv()
	runner := &runner.Runner{Env: env, Target: tg, Log: opts.Log, RunID: runID(), StopEarly: checker.DoubleCharged, Gate: runner.NewGate()}
	defer runner.Close()
	// The families run at the same time, each until the budget is spent:
	// a family that waits (TTLs, recovery windows) is not starved by a
	// slice of the budget, and its waits overlap the others' work.
	setup := time.Since(start)
	deadline := start.Add(opts.Budget)
	runs := make([]*familyRun, len(fams))
	aggs := make([]*aggregate, len(fams))
	for i := range fams {
		aggs[i] = &aggregate{start: time.Now()}
	}
	stopWatch := watchLate(ctx, runner, fams, aggs, deadline, opts)
	var wg sync.WaitGroup
	for i, fam := range fams {
		wg.Go(func() { runs[i] = runFamily(ctx, runner, fam, i, aggs[i], setup, deadline, opts) })
	}
	wg.Wait()
	stopWatch()
	acct, err := account(ctx, runner, runs)
	if err != nil {
		return rep, err
	}
	results := []checker.Result{acct}
	for _, fr := range runs {
		if err := writeIncident(opts.ReportDir, rep, fr); err != nil {
			opts.Log.Warn("incident file not written", "family", fr.Name, "err", err)
		}
		res := fr.result()
		rep.Families = append(rep.Families, fr.FamilyResult)
		addFamily(rep, fr, res)
		results = append(results, res)
	}
	addAccounting(rep, acct)
	merged := checker.Merge(results...)
	rep.Level, rep.LevelNote, rep.Coverage = merged.Level, merged.LevelNote, merged.Coverage
	return rep, nil
}

func resolveFamilies(names []string) ([]families.Family, error) {
	var fams []families.Family
	for _, n := range names {
		f, err := families.FamilyByName(n)
		if err != nil {
			return nil, err
		}
		fams = append(fams, f)
	}
	return fams, nil
}

func environment(ctx context.Context, tg *target.Target, opts Options) (harness.Env, func(), error) {
	if opts.Env != nil {
		return opts.Env, func() {}, nil
	}
	launch := opts.Launch
	if launch == nil {
		launch = process.Launch
	}
	env, err := launch(ctx, tg, harness.Options{DatabaseURL: opts.DatabaseURL, Logger: opts.Log, Replicas: opts.Replicas, WorkDir: opts.LogDir,
		Gateway: GatewayConfig(tg)})
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

func newReport(tg *target.Target, opts Options) *reports.Report {
	rep := &reports.Report{
		SchemaVersion: reports.SchemaVersion, Target: tg.Name, TargetFile: tg.File, Strict: opts.Strict,
		Seed: opts.Seed, Budget: reports.Duration(opts.Budget), Started: time.Now().UTC(), Mode: cmp.Or(opts.Mode, "process"),
		Replicas: tg.Replicas, Verdict: "unknown", Level: "L0",
		Env:             map[string]string{"go": runtime.Version(), "os": runtime.GOOS + "/" + runtime.GOARCH},
		Counterexamples: map[string]*history.History{},
	}
	if opts.Replicas > 0 {
		rep.Replicas = opts.Replicas
	}
	if opts.ShardCount > 1 {
		rep.Shard = fmt.Sprintf("%d/%d", opts.ShardIndex, opts.ShardCount)
	}
	return rep
}

// finish sets the verdict. It runs in a defer, so a panic or an
// interrupted run still leaves a report that says so.
func finish(rep *reports.Report, start time.Time, ctx context.Context, err error) {
	if rep == nil {
		return
	}
	rep.Duration = reports.Duration(time.Since(start))
	rep.Complete = err == nil && ctx.Err() == nil && len(rep.Families) > 0
	switch {
	case err != nil:
		rep.Interrupted = err.Error()
	case ctx.Err() != nil:
		rep.Interrupted = "interrupted: " + context.Cause(ctx).Error()
	}
	rep.Verdict = reports.OverallVerdict(rep)
}

// familyRun is one family's outcome with its counterexample and the
// failing examples whose violations the report shows.
type familyRun struct {
	reports.FamilyResult
	fail *search.Example
	agg  *aggregate
	res  *checker.Result // fixed result (a family that could not run)
}

// result merges every example's judgement, re-judged ones included.
func (fr *familyRun) result() checker.Result {
	if fr.res != nil {
		return *fr.res
	}
	res := fr.agg.result()
	if fr.Verdict != string(checker.Unknown) {
		fr.Verdict = string(res.Verdict)
	}
	return res
}

// DefaultParallel is how many examples of one family are in flight at
// once. Measured on 2 cores against the reference (issue 12): more adds
// CPU contention without more examples; families whose examples mostly
// wait get waitersPerWorker times as many.
const DefaultParallel = 4

const waitersPerWorker = 8

func runFamily(ctx context.Context, r *runner.Runner, fam families.Family, index int, agg *aggregate, setup time.Duration, deadline time.Time, opts Options) *familyRun {
	if need := fam.ExampleTime(r.Target); time.Now().Add(need).After(deadline) {
		return tooLong(fam, r.Target, need, setup, opts.Budget)
	}
	start := agg.start
	budget := deadline.Sub(start)
	prop := &search.Property{Runner: r, Family: fam, Replicas: r.Env.Replicas(), Ctx: ctx, OnExample: func(ex search.Example) {
		n, v := agg.add(ex)
		if opts.Progress != nil {
			opts.Progress(Progress{Family: fam.Name, Examples: n, Violations: v, Elapsed: time.Since(start), Budget: budget})
		}
	}}
	shrink := opts.ShrinkBudget
	if shrink <= 0 {
		shrink = min(max(time.Until(deadline), 3*time.Second), 20*time.Second)
	}
	seed := opts.Seed + uint64(index)<<32 + uint64(opts.ShardIndex-1)
	workers := cmp.Or(opts.Parallel, DefaultParallel)
	if fam.Waits {
		workers *= waitersPerWorker
	}
	if fam.Workers > 0 {
		workers = min(workers, fam.Workers)
	}
	seeds, failSeed, confirmed, err := search.Explore(ctx, prop, seed, uint64(opts.ShardCount), workers, deadline, shrink)
	res := agg.result()
	fr := &familyRun{agg: agg, FamilyResult: reports.FamilyResult{Name: fam.Name, Level: fam.Level, Verdict: string(res.Verdict),
		Scenarios: agg.count(), Seeds: seeds, FailSeed: failSeed, Duration: reports.Duration(time.Since(start)),
		FirstFailure: reports.Duration(agg.firstFail)}}
	if err != nil {
		fr.Verdict = string(checker.Unknown)
	}
	if ex := prop.LastFailure(); ex != nil {
		if solo := playSolo(prop, ex); solo != nil {
			ex = solo
		}
		fr.setFailure(ex)
		if !confirmed {
			fr.Note = "the failure did not reproduce when its example was re-played alone: it needed the examples it ran with (the counterexample is the example as found)"
		}
	} else if late := agg.lateFailure(); late != nil {
		fr.setFailure(late) // found by watchLate: nothing the client sent made that charge, so it is not shrunk
	}
	if err := agg.unplayed(); err != nil && fr.Note == "" {
		fr.Note = "an example could not be played to its end, so its evidence is incomplete: " + err.Error()
	}
	if opts.Progress != nil {
		agg.progress(true, func(n, v int) {
			opts.Progress(Progress{Family: fam.Name, Examples: n, Violations: v, Elapsed: time.Since(start), Budget: budget, Done: true})
		})
	}
	return fr
}

// playSolo re-plays a failing crash wave with only the payments that
// failed (families.Solo) and returns that smaller example if it fails
// too; a wave whose failure needs its other payments stays as it is.
func playSolo(prop *search.Property, ex *search.Example) *search.Example {
	var orders []string
	for _, c := range ex.Result.Checks {
		if c.Verdict != checker.Failed {
			continue
		}
		for _, v := range c.Violations {
			if i := strings.LastIndexByte(v.Order, '_'); i >= 0 {
				orders = append(orders, v.Order[i+1:])
			}
		}
	}
	sc, ok := families.Solo(ex.Scenario, orders)
	if !ok || len(sc.Wave) == len(ex.Scenario.Wave) {
		return nil
	}
	solo, played := prop.Judge(sc)
	if !played || !solo.Failed() {
		return nil
	}
	return &solo
}

func (fr *familyRun) setFailure(ex *search.Example) {
	fr.fail = ex
	fr.ShrunkRequests, fr.ShrunkFaults = ex.Scenario.Requests(), ex.Scenario.Faults()
	fr.Steps = fr.Steps[:0]
	for _, s := range ex.Scenario.Steps {
		fr.Steps = append(fr.Steps, s.String())
	}
}

// tooLong is the result of a family whose single example would not fit
// in the budget: UNKNOWN, naming the policy value that limits and the
// budget that would fit (set-up as measured, the example, and a margin),
// never a PASS.
func tooLong(fam families.Family, tg *target.Target, need, setup, budget time.Duration) *familyRun {
	fit := (setup + need + fitMargin).Round(time.Second) + time.Second
	note := fmt.Sprintf("not run: one %s example needs %s (%s) but the budget of %s leaves %s after set-up (%s); --budget %s fits",
		fam.Name, need.Round(10*time.Millisecond), fam.LimitOf(tg), budget, (budget - setup).Round(10*time.Millisecond), setup.Round(10*time.Millisecond), fit)
	res := checker.Result{Verdict: checker.Unknown, Level: "L0", Checks: []checker.CheckResult{{ID: "E2", Name: "retry window covered", Level: fam.Level, Verdict: checker.Unknown, Note: note}}}
	if fam.Name != "late-retry" {
		res.Checks[0] = checker.CheckResult{ID: "M6", Name: "convergence", Level: fam.Level, Verdict: checker.Unknown, Note: note}
	}
	return &familyRun{res: &res, FamilyResult: reports.FamilyResult{Name: fam.Name, Level: fam.Level, Verdict: string(checker.Unknown), Note: note}}
}

// fitMargin is what a suggested budget adds to set-up and one example:
// room for the accounting at the end and a slower set-up.
const fitMargin = 5 * time.Second

// aggregate merges every example's result of one family.
type aggregate struct {
	start      time.Time
	firstFail  time.Duration
	mu         sync.Mutex
	results    []checker.Result
	violations int
	// evidence is up to maxEvidence violations per check, each with the
	// history of the example it was found in, so that a report draws
	// every violation over its own ops and charges.
	evidence []reports.Violation
	shown    map[string]int
	firstErr error           // the first example that could not be played to its end
	late     *search.Example // the first failing example judged again (addLate)
	end      bool            // the family's last progress was sent
}

// progress calls fn with the examples and violations so far, unless the
// family's last progress (done) was sent already: a late judgement after
// the family ended shows in the report, not as progress after its end.
func (a *aggregate) progress(done bool, fn func(examples, violations int)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.end {
		return
	}
	a.end = done
	fn(len(a.results), a.violations)
}

// addLate judges again an example the gateway charged for after it was
// judged (ledger.Late) and adds it; a failing one is kept as the
// family's late failure.
func (a *aggregate) addLate(l ledger.Late) {
	ex := search.Example{Scenario: l.Scenario, History: l.History, Result: checker.Check(l.History)}
	a.add(ex)
	if ex.Failed() {
		a.mu.Lock()
		if a.late == nil {
			a.late = &ex
		}
		a.mu.Unlock()
	}
}

// lateFailure is the first failing example addLate got, or nil.
func (a *aggregate) lateFailure() *search.Example {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.late
}

// maxEvidence is how many violations of one check a report shows besides
// the shrunk counterexample's.
const maxEvidence = 3

func (a *aggregate) add(ex search.Example) (examples, violations int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.results = append(a.results, ex.Result)
	if ex.Err != nil && a.firstErr == nil {
		a.firstErr = ex.Err
	}
	if ex.Failed() {
		a.violations++
		if a.violations == 1 {
			a.firstFail = time.Since(a.start)
		}
	}
	a.keep(ex)
	return len(a.results), a.violations
}

// keep records ex's violations of each check not yet shown maxEvidence
// times, tagged with ex's source as checker.Merge tags them.
func (a *aggregate) keep(ex search.Example) {
	if a.shown == nil {
		a.shown = map[string]int{}
	}
	for _, c := range ex.Result.Checks {
		for _, v := range c.Violations {
			if a.shown[c.ID] >= maxEvidence {
				break
			}
			a.shown[c.ID]++
			v.Source = cmp.Or(v.Source, ex.Result.Source)
			a.evidence = append(a.evidence, reports.Violation{Violation: v, History: ex.History})
		}
	}
}

// unplayed is the first example error, if any.
func (a *aggregate) unplayed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.firstErr
}

// kept is the evidence kept so far (none for a family that did not run).
func (a *aggregate) kept() []reports.Violation {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]reports.Violation(nil), a.evidence...)
}

func (a *aggregate) failures() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.violations
}

// firstFailure is how long after the family's start its first failing
// example was judged (0: none yet).
func (a *aggregate) firstFailure() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.firstFail
}

func (a *aggregate) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.results)
}

func (a *aggregate) result() checker.Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	return checker.Merge(a.results...)
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
		rep.Checks = append(rep.Checks, reports.Check{ID: c.ID, Name: c.Name, Family: fr.Name, Level: c.Level, Verdict: string(c.Verdict), Exercised: c.Exercised, Note: c.Note})
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
// the run was in containers.
func targetArg(rep *reports.Report) string {
	arg := cmp.Or(rep.TargetFile, rep.Target)
	if rep.Mode == "docker" {
		arg += " --docker"
	}
	return arg
}

// writeIncident writes a failing family's shrunk counterexample as an
// incident file in dir, expecting the verdicts it produced, so that it
// replays with one command and can join scenarios/incidents/.
func writeIncident(dir string, rep *reports.Report, fr *familyRun) error {
	if dir == "" || fr.fail == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sc := Incident(fr.fail, fmt.Sprintf("%s-%s-seed%d", rep.Target, fr.Name, fr.FailSeed))
	sc.Target = rep.Target
	data, err := sc.Marshal()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "incident-"+fr.Name+".yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	fr.Incident = path
	return nil
}

// Incident turns a failing example into an incident scenario whose
// expectations are the verdicts it produced (FAILED and NON-STRICT).
func Incident(ex *search.Example, name string) scenarios.Scenario {
	sc := ex.Scenario
	sc.Name = name
	sc.Description = "shrunk counterexample found by idemcheck"
	sc.Expect = nil
	for _, c := range ex.Result.Checks {
		if c.Verdict == checker.Failed || c.Verdict == checker.NonStrict {
			sc.Expect = append(sc.Expect, scenarios.Expect{Check: c.ID, Verdict: string(c.Verdict)})
		}
	}
	return sc
}
