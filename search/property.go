package search

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/runner"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// Example is one played scenario and its judgement.
type Example struct {
	Scenario scenarios.Scenario
	History  *history.History
	Result   checker.Result
	Err      error // the scenario could not be played to its end
	Took     time.Duration
}

// Failed reports whether the example violated a check.
func (e Example) Failed() bool { return e.Result.Failed() }

// Property turns a family into a rapid property over one runner. It keeps
// the last failing example: after rapid shrinks, the last failure it ran
// is the minimal counterexample.
type Property struct {
	Runner   *runner.Runner
	Family   families.Family
	Replicas int
	// Target is the target as the family's generator sees it (a policy
	// cut to what fits the budget, families.Family.Part); nil means the
	// Runner's. The runner and the checker keep the Runner's.
	Target    *target.Target
	Ctx       context.Context
	OnExample func(Example) // progress; called for every example
	// ShrinkBudget bounds shrinking after the first failure. Rapid checks
	// its own shrink deadline only between passes, and one crash-window
	// example takes seconds, so the property itself stops running examples
	// once the budget is spent: the smallest failure so far stands.
	ShrinkBudget time.Duration

	mu       sync.Mutex
	failedAt time.Time
	lastFail *Example
	// confirming is set while the confirmation's first example (the
	// failure re-played) has not started: it runs whatever the shrink
	// budget.
	confirming bool
	// replayCut says the failure's re-play was cut short (the runner's
	// HardEnd).
	replayCut bool
	played    int
	unplayble int
}

// target is the target the generator sees.
func (p *Property) target() *target.Target {
	if p.Target != nil {
		return p.Target
	}
	return p.Runner.Config().Target
}

// Check is the rapid property: draw, play, judge. Its failure message is
// the same for every violation, so that rapid's shrinker accepts any
// smaller failing scenario (a message naming the check made it reject a
// smaller case that failed another check first, and shrinking stalled at
// five to eight requests); the minimal case's own verdicts are reported.
func (p *Property) Check(t *rapid.T) {
	sc := p.Family.Gen(t, p.target(), p.Replicas)
	if p.shrinkSpent() {
		t.Skip("shrink budget spent")
	}
	p.mu.Lock()
	replay := p.confirming
	p.confirming = false
	p.mu.Unlock()
	ex, ok := p.Judge(sc)
	if !ok {
		// The harness itself cut this example short (Ctrl-C, the hard
		// end): its unanswered requests are not evidence against the
		// server.
		if replay {
			p.mu.Lock()
			p.replayCut = true
			p.mu.Unlock()
		}
		t.Skip("interrupted")
	}
	if FirstFailed(ex.Result) != "" {
		t.Fatalf("a check FAILED")
	}
}

// Judge runs one scenario, judges its history and notes it; ok is false when the
// harness interrupted it (then it is not evidence and not noted).
func (p *Property) Judge(sc scenarios.Scenario) (ex Example, ok bool) {
	return p.JudgeIn(p.ctx(), sc)
}

// ctx is the property's context, Background when none was set.
func (p *Property) ctx() context.Context { return cmp.Or(p.Ctx, context.Background()) }

// JudgeIn is Judge under ctx instead of the property's own context: an
// example that may be cut short (a failure's smaller re-play, which
// only improves a counterexample already found) without the
// property's context.
func (p *Property) JudgeIn(ctx context.Context, sc scenarios.Scenario) (ex Example, ok bool) {
	start := time.Now()
	h, err := p.Runner.Run(ctx, sc)
	if ctx.Err() != nil || errors.Is(err, runner.ErrCut) {
		return Example{}, false
	}
	ex = Example{Scenario: sc, History: h, Result: checker.Check(h), Err: err, Took: time.Since(start)}
	p.note(ex)
	return ex, true
}

func (p *Property) note(ex Example) {
	p.mu.Lock()
	p.played++
	if ex.Err != nil {
		p.unplayble++
	}
	if ex.Failed() {
		p.lastFail = &ex
		if p.failedAt.IsZero() {
			p.failedAt = time.Now()
		}
	}
	p.mu.Unlock()
	if p.OnExample != nil {
		p.OnExample(ex)
	}
}

func (p *Property) shrinkSpent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ShrinkBudget > 0 && !p.failedAt.IsZero() && time.Since(p.failedAt) > p.ShrinkBudget && !p.confirming
}

// LastFailure is the last failing example played (after shrinking: the
// minimal one), or nil.
func (p *Property) LastFailure() *Example {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastFail
}

// Played counts examples played, including shrinking replays, and those
// that could not be played to the end.
func (p *Property) Played() (played, unplayable int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.played, p.unplayble
}

// Solo re-plays a failing example with only the payments that failed,
// re-built by the family's Solo hook (a crash wave's payments, apart),
// and returns that smaller example if it fails too. Nil when the family
// has no hook, the hook keeps nothing apart (the failure names no payment
// of it, or all of them), the re-play was cut short (ctx, the harness),
// or it passes: a failure that needs its other payments stays as found.
func (p *Property) Solo(ctx context.Context, ex *Example) *Example {
	if p.Family.Solo == nil {
		return nil
	}
	sc, ok := p.Family.Solo(ex.Scenario, failedOrders(ex))
	if !ok {
		return nil
	}
	solo, played := p.JudgeIn(ctx, sc)
	if !played || !solo.Failed() {
		return nil
	}
	return &solo
}

// failedOrders are the scenario's names ("o3") of the orders a FAILED
// check of ex names in a violation.
func failedOrders(ex *Example) []string {
	sym := map[string]string{} // real order -> the scenario's name for it
	if ex.History != nil {
		for _, op := range ex.History.Ops {
			sym[op.Order] = op.OrderSym
		}
	}
	var orders []string
	for _, c := range ex.Result.Checks {
		if c.Verdict != checker.Failed {
			continue
		}
		for _, v := range c.Violations {
			if o := sym[v.Order]; o != "" {
				orders = append(orders, o)
			}
		}
	}
	return orders
}

// FirstFailed is the id of the first FAILED check, in the checker's order.
func FirstFailed(r checker.Result) string {
	for _, c := range r.Checks {
		if c.Verdict == checker.Failed {
			return c.ID
		}
	}
	return ""
}

// searchMu serialises rapid's runs outside `go test`: rapid keeps its
// settings in global flags.
var searchMu sync.Mutex

// flagsMu guards rapid's global flags: setRapidFlags writes them, Draw
// reads them while other families explore (a confirmation's own run reads
// them too, but confirmations take turns under searchMu).
var flagsMu sync.RWMutex

// initFlags makes rapid usable outside `go test`: rapid asks
// testing.Short, which needs the testing flags registered and parsed.
var initFlags sync.Once

// setRapidFlags sets one confirmation's settings: one check, from seed,
// shrinking for at most shrink, and no fail file.
func setRapidFlags(shrink time.Duration, seed uint64) error {
	flagsMu.Lock()
	defer flagsMu.Unlock()
	initFlags.Do(func() {
		if flag.Lookup("test.short") == nil {
			testing.Init()
		}
		if !flag.Parsed() {
			flag.CommandLine.Parse(nil)
		}
	})
	for name, v := range map[string]string{"rapid.checks": "1", "rapid.nofailfile": "true", "rapid.shrinktime": shrink.String(),
		"rapid.seed": strconv.FormatUint(seed, 10)} {
		if err := flag.Set(name, v); err != nil {
			return fmt.Errorf("rapid flag %s: %w", name, err)
		}
	}
	return nil
}

// searchTB is the rapid.TB of a search outside `go test`. It records
// failure and the log; FailNow does not stop the goroutine, because the
// only caller is rapid's own reporting after the property has returned.
type searchTB struct {
	name   string
	failed bool
	log    strings.Builder
}

func (t *searchTB) Helper()                   {}
func (t *searchTB) Name() string              { return "idemcheck/" + t.name }
func (t *searchTB) Logf(f string, a ...any)   { fmt.Fprintf(&t.log, f+"\n", a...) }
func (t *searchTB) Log(a ...any)              { fmt.Fprintln(&t.log, a...) }
func (t *searchTB) Skipf(f string, a ...any)  {}
func (t *searchTB) Skip(a ...any)             {}
func (t *searchTB) SkipNow()                  {}
func (t *searchTB) Errorf(f string, a ...any) { t.failed = true; t.Logf(f, a...) }
func (t *searchTB) Error(a ...any)            { t.failed = true; t.Log(a...) }
func (t *searchTB) Fatalf(f string, a ...any) { t.Errorf(f, a...) }
func (t *searchTB) Fatal(a ...any)            { t.Error(a...) }
func (t *searchTB) FailNow()                  { t.failed = true }
func (t *searchTB) Fail()                     { t.failed = true }
func (t *searchTB) Failed() bool              { return t.failed }
