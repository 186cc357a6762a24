package target

import (
	"fmt"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/crashwave"
	"github.com/idemcheck/idemcheck/internal/yamlfile"
)

// CrashWindowFits says whether a crash wave can strike at least one of
// the target's crash points and still send every payment's final retry
// inside the promise, clear of its end's band (crashwave.Fit). A retry
// past the promise opens a new epoch, where a crash-induced second charge
// is outside every promise and proves nothing, so a target whose policy
// leaves no point room is refused for that family with what to change.
// A policy that leaves room for some points only is played: the wave
// strikes those, and CrashPointsLeftOut names the others (and says so
// when the recovery window does not fit before the final retries). Its
// error is a *yamlfile.FieldError on policy.recovery_window.
func (t *Target) CrashWindowFits() error {
	p := t.Policy
	if len(crashwave.Fit(t.StoreNames(), p.WaveTerms()).Points) > 0 {
		return nil
	}
	points := crashwave.For(t.StoreNames())
	cheapest := points[0].Cost
	for _, cp := range points {
		cheapest = min(cheapest, cp.Cost)
	}
	msg := fmt.Sprintf("no crash point fits: a crash-window retry after the shortest strike (%s), with %s to spare, lands %s after the first request, past the promise max(ttl, retry_window) = %s less its %s boundary band: set policy.retry_window to at least %s",
		cheapest, crashwave.Margin, cheapest+crashwave.Margin, p.Promise(), p.Band(), cheapest+crashwave.Margin+p.Band())
	return bad("policy.recovery_window", "%s", msg)
}

// CrashPointsLeftOut says what a crash wave cannot show under the
// target's policy (crashwave.Fit) and what would: the crash points it
// leaves no room to strike, and, when the recovery window does not fit
// between the strikes and the final retries, that M6 judges only the
// payments whose retry got a definitive answer. "" when the whole wave
// fits. A crash wave strikes the other points; L4 needs them all.
func (t *Target) CrashPointsLeftOut() string {
	p := t.Policy
	w := crashwave.Fit(t.StoreNames(), p.WaveTerms())
	var notes []string
	if !w.Recovers {
		promise, _ := crashwave.RoomFor(p.WaveTerms(), cheapestOf(w.Points))
		notes = append(notes, fmt.Sprintf("the recovery window (%s) does not fit between a strike and the final retries, which go %s after the first request, inside the promise %s less its %s band: M6 judges only the payments whose retry got a definitive answer, and one still indeterminate is UNKNOWN; policy.retry_window %s lets it judge them all",
			p.RecoveryWindow, w.RetryAt, p.Promise(), p.Band(), promise))
	}
	if len(w.Out) > 0 {
		var names []string
		var longest time.Duration
		for _, cp := range w.Out {
			names = append(names, fmt.Sprintf("%s (a %s strike)", cp.Name, cp.Cost))
			longest = max(longest, cp.Cost)
		}
		msg := fmt.Sprintf("crash points not struck: %s: the policy leaves a wave %s for its strikes", strings.Join(names, ", "), w.Room)
		if w.Recovers {
			promise, recovery := crashwave.RoomFor(p.WaveTerms(), longest)
			msg += fmt.Sprintf(" (the promise %s less the recovery window %s, the %s band and %s to spare); policy.retry_window %s strikes them", p.Promise(), p.RecoveryWindow, p.Band(), crashwave.Margin, promise)
			if recovery > 0 {
				msg += fmt.Sprintf(", or policy.recovery_window %s", recovery)
			}
		} else {
			msg += fmt.Sprintf(" (the promise %s less the %s band and %s to spare); policy.retry_window %s strikes them", p.Promise(), p.Band(), crashwave.Margin, longest+p.Band()+crashwave.Margin)
		}
		notes = append(notes, msg)
	}
	return strings.Join(notes, "; ")
}

// cheapestOf is the shortest strike among points (zero for none).
func cheapestOf(points []crashwave.Point) time.Duration {
	var d time.Duration
	for i, cp := range points {
		if i == 0 || cp.Cost < d {
			d = cp.Cost
		}
	}
	return d
}

// Refuse places a validation error of t (a *yamlfile.FieldError such as
// CrashWindowFits returns) in t's file, as file:line: field: what to
// change, wrapping ErrInvalid so that the CLI exits 2. Checks that only
// matter for some families run once the families are chosen, after Load,
// which is why they are located here rather than by Parse.
func (t *Target) Refuse(err error) error {
	if err == nil {
		return nil
	}
	name := t.File
	if name == "" {
		name = "built-in target " + t.Name
	}
	return yamlfile.Locate(name, t.src, err, ErrInvalid)
}
