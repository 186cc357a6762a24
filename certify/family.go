package certify

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/search"
	"github.com/idemcheck/idemcheck/target"
)

// familyRun is the one record of a family in a certification, made
// before it starts: the family, every example's judgement (agg), and its
// outcome with its counterexample and the failing examples whose
// violations the report shows.
type familyRun struct {
	reports.FamilyResult
	fam   families.Family
	index int // the family's place in the run: its seeds' offset
	agg   *aggregate
	fail  *search.Example
	res   *checker.Result // fixed result (a family that could not run)
	// rest is the UNKNOWN of the check the family decides, for the part
	// of its example that did not fit the budget (part), if it played
	// only a part.
	rest *checker.Result
	stop context.CancelCauseFunc // ends the family's context (Options.FailFast)
}

// result merges every example's judgement, re-judged ones included.
func (fr *familyRun) result() checker.Result {
	if fr.res != nil {
		return *fr.res
	}
	res := fr.agg.result()
	if fr.rest != nil {
		res = checker.Merge(res, *fr.rest)
	}
	if fr.Verdict != string(checker.Unknown) {
		fr.Verdict = string(res.Verdict)
	}
	return res
}

// DefaultParallel is how many examples of one family are in flight at
// once. Measured on 2 cores against the reference: more adds
// CPU contention without more examples; families whose examples mostly
// wait get more (families.Family.InFlight).
const DefaultParallel = 4

// runFamily explores fr's family until the deadline or a failure and
// fills fr with the outcome: a failing example re-played alone and shrunk
// (or a late failure the ledger found), and UNKNOWN when the family could
// not run or an example could not be played to its end.
func (c *certification) runFamily(ctx context.Context, fr *familyRun) {
	fam, agg, opts, deadline := fr.fam, fr.agg, c.opts, c.deadline
	if !gatewayIdempotent(c.tg, opts.NoGatewayIdempotency) && fam.Crashes {
		why := "--gateway-idempotency off"
		if !opts.NoGatewayIdempotency {
			why = "gateway.provider: " + c.tg.Gateway.Provider
		}
		fr.notJudged("not run (" + why + "): " + checker.NoProviderIdempotency)
		return
	}
	if fam.Fits != nil {
		if err := fam.Fits(c.tg); err != nil {
			fr.undecided("not run: " + err.Error())
			return
		}
	}
	var played *target.Target
	if need := fam.ExampleTime(c.tg); time.Now().Add(need).After(deadline) {
		if played = fr.part(c.tg, need, time.Until(deadline), c.setup, opts.Budget); played == nil {
			fr.tooLong(c.tg, need, c.setup, opts.Budget)
			return
		}
	}
	start := agg.start
	budget := deadline.Sub(start)
	prop := &search.Property{Runner: c.runner, Family: fam, Target: played, Replicas: c.runner.Config().Env.Replicas(), Ctx: ctx, OnExample: func(ex search.Example) {
		n, v := agg.add(ex)
		if opts.FailFast && ex.Failed() {
			c.stopOthers(fr)
		}
		if opts.Progress != nil {
			opts.Progress(Progress{Family: fam.Name, Examples: n, Violations: v, Elapsed: time.Since(start), Budget: budget})
		}
	}}
	shrink := opts.ShrinkBudget
	if shrink <= 0 {
		shrink = min(max(time.Until(deadline), 3*time.Second), 20*time.Second)
	}
	seed := opts.Seed + uint64(fr.index)<<32 + uint64(opts.ShardIndex-1)
	workers := fam.InFlight(c.tg, cmp.Or(opts.Parallel, DefaultParallel))
	hard := c.hard
	seeds, failSeed, confirmed, err := search.Explore(ctx, prop, seed, uint64(opts.ShardCount), workers, deadline, hard, shrink)
	fr.Verdict = string(agg.result().Verdict)
	fr.Scenarios, fr.Seeds, fr.FailSeed = agg.count(), seeds, failSeed
	fr.Duration, fr.FirstFailure = reports.Duration(time.Since(start)), reports.Duration(agg.firstFailure())
	if err != nil {
		fr.Verdict = string(checker.Unknown)
	}
	if context.Cause(ctx) == errFailFast {
		note := fmt.Sprintf("stopped when %s failed (--fail-fast): its examples in flight were not judged, and the checks it decides are UNKNOWN unless they failed", c.stoppedBy)
		rest := checker.Undecided(fam.DecidedBy(), fam.Level, note)
		fr.rest = &rest
		fr.addNote(note)
	}
	if ex := prop.LastFailure(); ex != nil {
		if time.Until(deadline) > ex.Took && ctx.Err() == nil {
			// Only within the budget, cut at its end: the re-play only
			// makes a counterexample smaller, the failure found stands
			// without it, and the gate and convergence stretch a wave
			// (redis-read-back-lock's solo wave ran 8s past the budget
			// and held the other families' last examples back with it).
			sctx, cancel := context.WithDeadline(ctx, deadline)
			if solo := prop.Solo(sctx, ex); solo != nil {
				ex = solo
			}
			cancel()
		}
		fr.setFailure(ex)
		switch confirmed {
		case search.NotReproduced:
			fr.Note = "the failure did not reproduce when its example was re-played alone: it needed the examples it ran with (the counterexample is the example as found)"
		case search.NotReplayed:
			fr.Note = fmt.Sprintf("found %s into the family's time: not re-played alone nor shrunk, which would have run past the budget by more than %s (the counterexample is the example as found, with its history)",
				agg.firstFailure().Round(100*time.Millisecond), Overrun)
		}
	} else if late := agg.lateFailure(); late != nil {
		fr.setFailure(late) // found by watchLate: nothing the client sent made that charge, so it is not shrunk
	}
	if cut := c.runner.Cut(fam.Name); ctx.Err() == nil {
		if cut.Probing > 0 {
			fr.addNote(fmt.Sprintf("%d example(s) held up by other examples' faults sent no probe past the budget, and were judged on the probes they sent", cut.Probing))
		}
		if cut.HardEnd > 0 {
			fr.addNote(fmt.Sprintf("%d example(s) still in flight %s past the budget were cut there and not judged (their requests held at the gate were never sent)", cut.HardEnd, Overrun-endReserve))
		}
	}
	if err := agg.unplayed(); err != nil && fr.Note == "" {
		fr.Note = "an example could not be played to its end, so its evidence is incomplete: " + err.Error()
	}
	if caveat := fam.CaveatFor(c.tg); caveat != "" {
		fr.addNote(caveat)
	}
	if note := agg.unstruckNote(); note != "" {
		fr.addNote(note)
	}
	if opts.Progress != nil {
		agg.progress(true, func(n, v int) {
			opts.Progress(Progress{Family: fam.Name, Examples: n, Violations: v, Elapsed: time.Since(start), Budget: budget, Done: true})
		})
	}
}

// addNote appends note to the family's note.
func (fr *familyRun) addNote(note string) {
	fr.Note = strings.TrimPrefix(fr.Note+"; ", "; ") + note
}

func (fr *familyRun) setFailure(ex *search.Example) {
	fr.fail = ex
	fr.ShrunkRequests, fr.ShrunkFaults = ex.Scenario.Requests(), ex.Scenario.Faults()
	fr.Steps = fr.Steps[:0]
	for _, s := range ex.Scenario.Steps {
		fr.Steps = append(fr.Steps, s.String())
	}
}

// tooLong makes the result of a family whose single example would not
// fit in the budget: UNKNOWN on the check the family decides, naming the
// policy value that limits and the budget that would fit (set-up as
// measured, the example, and a margin), never a PASS.
func (fr *familyRun) tooLong(tg *target.Target, need, setup, budget time.Duration) {
	fam := fr.fam
	fit := (setup + need + fitMargin).Round(time.Second) + time.Second
	note := fmt.Sprintf("not run: one %s example needs %s (%s) but the budget of %s leaves %s after set-up (%s); --budget %s fits",
		fam.Name, need.Round(10*time.Millisecond), fam.LimitOf(tg), budget, (budget - setup).Round(10*time.Millisecond), setup.Round(10*time.Millisecond), fit)
	fr.undecided(note)
}

// undecided makes the result of a family not played, whose checks stay
// UNKNOWN with note: its example does not fit the budget (tooLong), or
// the target's policy leaves it no room to ask its question
// (families.Family.Fits: a crash-window retry after the recovery window
// would land past a promise of a second). Named with --families, such a
// family is refused before anything starts (exit 2); among the default
// families the others run (exact-ttl, promise 1s, was judged M1 FAILED
// by crash-window waves whose recovery outlasted the gateway's 1.25s
// memory of their keys).
func (fr *familyRun) undecided(note string) {
	res := checker.Undecided(fr.fam.DecidedBy(), fr.fam.Level, note)
	fr.res = &res
	fr.Verdict, fr.Note = string(checker.Unknown), note
}

// part readies a family whose one example (need) does not fit in room to
// play the part that does (families.Family.Part): it returns the target
// its generator sees, and notes the check the family decides as UNKNOWN
// for the rest, naming the budget that covers it all; a failure found in
// the part is FAILED as usual. Nil when not even a part fits.
func (fr *familyRun) part(tg *target.Target, need, room, setup, budget time.Duration) *target.Target {
	fam := fr.fam
	if fam.Part == nil {
		return nil
	}
	played, covers, ok := fam.Part(tg, room-fitMargin)
	if !ok {
		return nil
	}
	fit := (setup + need + fitMargin).Round(time.Second) + time.Second
	note := fmt.Sprintf("played a part: one whole %s example needs %s (%s) but the budget of %s leaves %s after set-up (%s), so its examples sent %s; --budget %s covers it all",
		fam.Name, need.Round(10*time.Millisecond), fam.LimitOf(tg), budget, (budget - setup).Round(10*time.Millisecond), setup.Round(10*time.Millisecond), covers, fit)
	rest := checker.Undecided(fam.DecidedBy(), fam.Level, note)
	fr.rest, fr.Note = &rest, note
	return played
}

// notJudged makes the result of a family deliberately not played, because
// no server could answer its question in this run: nothing fails, nothing
// is exercised, and the family's note (and the level's, from the
// histories) says why. A PASS that certifies nothing, as a check that was
// not exercised is.
func (fr *familyRun) notJudged(note string) {
	res := checker.NotJudged(fr.fam.DecidedBy(), fr.fam.Level, note)
	fr.res = &res
	fr.Verdict, fr.Note, fr.NotJudged = string(checker.Pass), note, true
}

// Overrun is how far past its budget a run may end: the failure found
// last is re-played alone and shrunk only in that time (search.Explore),
// less endReserve for accounting, reports and tear-down.
const Overrun = 5 * time.Second

const endReserve = 1500 * time.Millisecond

// fitMargin is what a suggested budget adds to set-up and one example:
// room for the accounting at the end and a slower set-up.
const fitMargin = 5 * time.Second
