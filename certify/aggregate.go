package certify

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/ledger"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/search"
)

// aggregate merges every example's result of one family.
type aggregate struct {
	start      time.Time
	firstFail  time.Duration
	mu         sync.Mutex
	merged     checker.Merger // every example's judgement, folded in as it comes
	violations int
	// evidence is up to maxEvidence violations per check, each with the
	// history of the example it was found in, so that a report draws
	// every violation over its own ops and charges.
	evidence []reports.Violation
	shown    map[string]int
	firstErr error           // the first example that could not be played to its end
	late     *search.Example // the first failing example judged again (addLate)
	end      bool            // the family's last progress was sent
	// unstruck are the crash-wave payments whose strike did not happen,
	// per crash point, with the first reason seen (unstruckNote).
	unstruck map[string]*unstruckPoint
	// keep writes every history to disk as it comes (nil: none kept).
	disk *keptHistories
}

type unstruckPoint struct {
	payments map[string]bool // real orders: an example judged again counts once
	why      string
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
	fn(a.merged.Len(), a.violations)
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
	a.disk.write(ex.History)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.merged.Add(ex.Result)
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
	if ex.History != nil {
		a.addUnstruck(ex.History.Unstruck)
	}
	return a.merged.Len(), a.violations
}

// addUnstruck counts the payments of us per crash point; a.mu is held.
func (a *aggregate) addUnstruck(us []history.Unstruck) {
	for _, u := range us {
		if a.unstruck == nil {
			a.unstruck = map[string]*unstruckPoint{}
		}
		p := a.unstruck[u.Point]
		if p == nil {
			p = &unstruckPoint{payments: map[string]bool{}, why: u.Why}
			a.unstruck[u.Point] = p
		}
		p.payments[u.Payment] = true
	}
}

// unstruckNote names, per crash point, how many payments its strike
// missed as the waves played and why (the first reason seen); "" when
// every strike happened. Those payments were judged without it.
func (a *aggregate) unstruckNote() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.unstruck) == 0 {
		return ""
	}
	var parts []string
	for _, point := range slices.Sorted(maps.Keys(a.unstruck)) {
		p := a.unstruck[point]
		parts = append(parts, fmt.Sprintf("%s, %d (%s)", point, len(p.payments), p.why))
	}
	return "payments whose strike did not happen, judged without it: " + strings.Join(parts, "; ")
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
	return a.merged.Len()
}

func (a *aggregate) result() checker.Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.merged.Result()
}
