package search

import (
	"context"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/scenarios"
	"pgregory.net/rapid"
)

// Draw is the scenario a family draws for seed: the very scenario that
// rapid's first example for that seed is (rapid.Check with rapid.seed set
// to seed draws it again), so an example found by Explore is confirmed
// and shrunk by rapid from the same place. Safe for concurrent use.
func Draw(p *Property, seed uint64) scenarios.Scenario {
	gen := rapid.Custom(func(t *rapid.T) scenarios.Scenario { return p.Family.Gen(t, p.target(), p.Replicas) })
	// Example reads rapid.seed even when handed a seed: it must not run
	// while another family's confirmation sets it.
	flagsMu.RLock()
	defer flagsMu.RUnlock()
	return gen.Example(int(seed))
}

// Confirmation says what became of a failure found by Explore.
type Confirmation int

const (
	// Reproduced: re-played alone, it failed again (and was shrunk).
	Reproduced Confirmation = iota + 1
	// NotReproduced: re-played alone, it passed; it needed the examples
	// it ran with.
	NotReproduced
	// NotReplayed: re-playing it would have run past the hard end, so it
	// stands as found.
	NotReplayed
)

// Explore plays a family's examples workers at a time, on seeds seed,
// seed+stride, ... until the deadline or a failure; examples share the
// environment through the runner's Gate. A worker does not start an
// example that would likely end after the deadline (one example's time is
// the family's MinTime or, once known, the longest example so far). On a
// failure the other workers finish what they play, and the failing seed
// is re-played alone by rapid, which confirms it and shrinks it (for at
// most shrink), all by hard (a little past the deadline: a run ends
// within its budget and a few seconds): a failure whose re-play would end
// later is not re-played (NotReplayed), and shrinking stops in time for
// the last example it starts, as long as the family's longest, to end by
// hard. The runner's HardEnd (hard) cuts a step still in flight then.
func Explore(ctx context.Context, p *Property, seed, stride uint64, workers int, deadline, hard time.Time, shrink time.Duration) (seedsRun int, failSeed uint64, confirmed Confirmation, err error) {
	if stride == 0 {
		stride = 1
	}
	workers = max(workers, 1)
	// One lock guards the explorer's state: examples take seconds, so a
	// lock per example costs nothing.
	var (
		mu      sync.Mutex
		next    = seed
		played  int
		longest = p.Family.ExampleTime(p.target())
		failed  bool
		took    time.Duration // the failing example's
		wg      sync.WaitGroup
	)
	// take hands a worker the next seed, or false when no example should
	// start: a failure was found, ctx ended, or one would likely outlast
	// the deadline.
	take := func() (uint64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if failed || ctx.Err() != nil || time.Until(deadline) < longest {
			return 0, false
		}
		s := next
		next += stride
		return s, true
	}
	for range workers {
		wg.Go(func() {
			for s, ok := take(); ok; s, ok = take() {
				ex, ok := p.Judge(Draw(p, s))
				if !ok {
					return
				}
				mu.Lock()
				played++
				longest = max(longest, ex.Took)
				if FirstFailed(ex.Result) != "" && !failed {
					failed, failSeed, took = true, s, ex.Took
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if !failed || ctx.Err() != nil {
		return played, failSeed, 0, nil
	}
	// The re-play takes about as long as the example did. A shrink step
	// may take as long as the family's longest example, not the failing
	// one's: a failing late-retry example stops at its first double
	// charge, while a smaller candidate that passes waits out every
	// probe (tz-naive-expiry seed 5 ended 22 s past its budget when
	// steps were counted at the failure's 3 s). Steps start only while
	// one that long still ends by hard; with no room, the failure is
	// confirmed and not shrunk.
	confirmed, err = p.confirm(failSeed, hard, took, longest, shrink)
	return played, failSeed, confirmed, err
}

// confirm re-plays seed with rapid, which shrinks a failure it
// reproduces. Rapid keeps its settings in global flags, so confirmations
// of different families take turns; the room left is measured once this
// one's turn has come (replay-as-409, failing in six families, confirmed
// its last family 5s past the hard end when the room was measured before
// the wait). Nothing is re-played when the failing example (took) would
// not end by hard, and shrinking stops while a step as long as the
// family's longest example still ends by it.
func (p *Property) confirm(seed uint64, hard time.Time, took, longest, shrink time.Duration) (Confirmation, error) {
	searchMu.Lock()
	defer searchMu.Unlock()
	if time.Until(hard) < took {
		return NotReplayed, nil
	}
	// A step the gate or convergence stretches past the hard end is cut
	// there by the runner (runner.Runner.HardEnd): shrinking stops with
	// the smallest failure so far, and a re-play cut so stands as not
	// re-played (redis-last-writer-wins's crash-window shrinking, its
	// waves held at the gate, ran 10s past the hard end and held every
	// other family with it).
	p.mu.Lock()
	p.replayCut = false
	p.mu.Unlock()
	reproduced, err := p.confirmWith(seed, max(min(shrink, time.Until(hard)-max(took, longest)), time.Millisecond))
	p.mu.Lock()
	cut := p.replayCut
	p.mu.Unlock()
	if cut {
		return NotReplayed, err
	}
	if reproduced {
		return Reproduced, err
	}
	return NotReproduced, err
}

// confirmWith runs the confirmation, under searchMu.
func (p *Property) confirmWith(seed uint64, shrink time.Duration) (bool, error) {
	if p.ShrinkBudget == 0 {
		p.ShrinkBudget = shrink
	}
	if err := setRapidFlags(shrink, seed); err != nil {
		return false, err
	}
	p.mu.Lock()
	p.failedAt = time.Now() // the shrink budget runs from the confirmation
	p.confirming = true
	p.mu.Unlock()
	tb := &searchTB{name: p.Family.Name}
	rapid.Check(tb, p.Check)
	return tb.failed, nil
}
