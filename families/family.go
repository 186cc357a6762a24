package families

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// Family is a named generator of scenarios: a property-based test family.
type Family struct {
	Name  string
	Level string // the certification level it exercises (docs/protocol.md §7)
	Doc   string
	// Gen draws one scenario. Every Draw is labelled, so a shrunk
	// counterexample reads as the choices that matter.
	Gen func(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario
	// MinTime is the wall time one example needs at least for a target
	// (it waits out TTLs or recovery windows); nil means "short".
	MinTime func(tg *target.Target) time.Duration
	// Part, when set, lets a family whose one example does not fit in
	// room play the part of it that does: it returns the target as the
	// generator should see it (a policy cut to what fits) and what that
	// part covers, in words; ok is false when not even a part fits. The
	// histories keep the target's own policy, so a failure found in the
	// part is a failure; the check the family decides stays UNKNOWN for
	// the rest (certify).
	Part func(tg *target.Target, room time.Duration) (played *target.Target, covers string, ok bool)
	// Fits, when set, refuses a target whose policy the family cannot
	// probe meaningfully (a *yamlfile.FieldError naming the field and what
	// to change; see CheckFamilies). Nil means every valid target fits.
	Fits func(tg *target.Target) error
	// Waits says the family's examples spend most of their time waiting
	// (TTLs): it gets more examples in flight than the others, since a
	// waiting example costs nothing.
	Waits bool
	// Workers caps the family's examples in flight (0: no cap of its own).
	Workers int
	// WaitScale, when set, says how many times as many examples as a
	// family that does not wait this family keeps in flight for tg (1 to
	// WaitersPerWorker): its examples wait for as long as the policy
	// makes them (a gateway as slow as max_wait allows), a wait that
	// costs no CPU. See InFlight.
	WaitScale func(tg *target.Target) int
	// Limit names the policy value that sets how long one example takes,
	// for the advice given when a family cannot fit its budget.
	Limit func(tg *target.Target) string
	// Decides is the check this family's examples decide last, reported
	// UNKNOWN when the family cannot run at all; "" means M6
	// (convergence). See DecidedBy.
	Decides string
	// Rank orders the table (reports list families in this order).
	Rank int
	// Composite says the family draws its examples from the others (the
	// nightly soak): it adds time, not coverage, so it is certified only
	// when named, and never draws from itself.
	Composite bool
	// Caveat, when set, says what the family cannot show for a target
	// ("" when nothing): certify adds it to the family's note, so a
	// family that played its examples without the traffic it exists for
	// says so instead of passing as if it had.
	Caveat func(tg *target.Target) string
	// Solo, when set, re-builds one of the family's scenarios with only
	// the payments of the given symbolic orders ("o3"), so that a failure
	// is re-played with only the payments that failed
	// (search.Property.Solo); ok is false when the scenario has no such
	// payments to keep apart, or would keep them all.
	Solo func(sc scenarios.Scenario, orders []string) (solo scenarios.Scenario, ok bool)
	// Crashes says the family's examples crash servers (kill them, or make
	// the gateway charge without saying so) and judge how they recover.
	// No server can recover from that without an idempotent provider, so
	// against a gateway without idempotency such a family is not judged.
	Crashes bool
}

// WaitersPerWorker is how many times as many examples a family whose
// examples mostly wait keeps in flight (Waits): a waiting example costs
// nothing.
const WaitersPerWorker = 8

// InFlight is how many examples of f are in flight at once against tg in
// a run that gives a family workers: WaitersPerWorker times as many when
// its examples mostly wait (Waits), WaitScale times as many when the
// policy sets how long they wait, at most Workers.
func (f Family) InFlight(tg *target.Target, workers int) int {
	switch {
	case f.Waits:
		workers *= WaitersPerWorker
	case f.WaitScale != nil:
		workers *= min(max(f.WaitScale(tg), 1), WaitersPerWorker)
	}
	if f.Workers > 0 {
		workers = min(workers, f.Workers)
	}
	return workers
}

// LimitOf names what limits one example of f against tg.
func (f Family) LimitOf(tg *target.Target) string {
	if f.Limit == nil {
		return "the family's own requests"
	}
	return f.Limit(tg)
}

// CaveatFor is what f cannot show for tg, or "".
func (f Family) CaveatFor(tg *target.Target) string {
	if f.Caveat == nil {
		return ""
	}
	return f.Caveat(tg)
}

// DecidedBy is the check reported UNKNOWN when f cannot run at all.
func (f Family) DecidedBy() string { return cmp.Or(f.Decides, "M6") }

// ExampleTime is how long one example of f needs at least against tg.
func (f Family) ExampleTime(tg *target.Target) time.Duration {
	if f.MinTime == nil {
		return 0
	}
	return f.MinTime(tg)
}

// Families is the table of property-based families, in Rank order.
// Each family registers itself from its own file (register): a new
// family is one file.
var Families []Family

// register adds f to the table, keeping it in Rank order. Called from
// the init of the family's own file.
func register(f Family) {
	Families = append(Families, f)
	slices.SortStableFunc(Families, func(a, b Family) int { return cmp.Compare(a.Rank, b.Rank) })
}

// FamilyByName finds a family.
func FamilyByName(name string) (Family, error) {
	for _, f := range Families {
		if f.Name == name {
			return f, nil
		}
	}
	return Family{}, fmt.Errorf("unknown family %q: expected one of %s", name, strings.Join(FamilyNames(), ", "))
}

// FamilyNames lists the families' names in table order.
func FamilyNames() []string { return Names(Families) }

// Select resolves family names once, in the order given, for a
// certification; an unknown name is an error naming the known ones.
func Select(names ...string) ([]Family, error) {
	var out []Family
	for _, n := range names {
		f, err := FamilyByName(n)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// MustSelect is Select for names known to exist (built-in tables,
// tests); it panics on an unknown name.
func MustSelect(names ...string) []Family {
	out, err := Select(names...)
	if err != nil {
		panic(err)
	}
	return out
}

// Default is what a certification runs when no family is named: every
// family but the composite ones (mixed draws from the others, so it adds
// time, not coverage).
func Default() []Family {
	var out []Family
	for _, f := range Families {
		if !f.Composite {
			out = append(out, f)
		}
	}
	return out
}

// Names lists fams' names.
func Names(fams []Family) []string {
	var out []string
	for _, f := range fams {
		out = append(out, f.Name)
	}
	return out
}

// CheckFamilies refuses a target that one of the families cannot probe
// meaningfully (Family.Fits), located in the target's file (file:line:
// field: what to change) and wrapping target.ErrInvalid, so the CLI
// exits 2 before anything starts. Only the chosen families are asked: a
// target whose recovery window outlasts its promise can still be
// certified for everything but crash-window (and mixed leaves
// crash-window out for it).
func CheckFamilies(tg *target.Target, fams []Family) error {
	for _, f := range fams {
		if f.Fits == nil {
			continue
		}
		if err := f.Fits(tg); err != nil {
			return tg.Refuse(err)
		}
	}
	return nil
}
