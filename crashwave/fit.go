package crashwave

import (
	"fmt"
	"strings"
	"time"
)

// Refusal says why no crash wave fits terms t for a target with these
// stores, and what to change ("" when one does, Fit): a wave that
// strikes no point sends every payment's final retry past the promise,
// where a crash-induced second charge proves nothing. The target refuses
// the crash-window family with it (target.Target.CrashWindowFits, on
// policy.recovery_window).
func Refusal(stores []string, t Terms) string {
	if len(Fit(stores, t).Points) > 0 {
		return ""
	}
	cheapest := cheapestOf(For(stores))
	return fmt.Sprintf("no crash point fits: a crash-window retry after the shortest strike (%s), with %s to spare, lands %s after the first request, past the promise max(ttl, retry_window) = %s less its %s boundary band: set policy.retry_window to at least %s",
		cheapest, Margin, cheapest+Margin, t.Promise, t.Band, cheapest+Margin+t.Band)
}

// LeftOut says what a crash wave cannot show under terms t for a target
// with these stores (Fit) and what would: the crash points it leaves no
// room to strike, and, when the recovery window does not fit between the
// strikes and the final retries, that M6 judges only the payments whose
// retry got a definitive answer. "" when the whole wave fits. A crash
// wave strikes the other points; L4 needs them all.
func LeftOut(stores []string, t Terms) string {
	w := Fit(stores, t)
	var notes []string
	if !w.Recovers {
		promise, _ := RoomFor(t, cheapestOf(w.Points))
		notes = append(notes, fmt.Sprintf("the recovery window (%s) does not fit between a strike and the final retries, which go %s after the first request, inside the promise %s less its %s band: M6 judges only the payments whose retry got a definitive answer, and one still indeterminate is UNKNOWN; policy.retry_window %s lets it judge them all",
			t.Recovery, w.RetryAt, t.Promise, t.Band, promise))
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
			promise, recovery := RoomFor(t, longest)
			msg += fmt.Sprintf(" (the promise %s less the recovery window %s, the %s band and %s to spare); policy.retry_window %s strikes them", t.Promise, t.Recovery, t.Band, Margin, promise)
			if recovery > 0 {
				msg += fmt.Sprintf(", or policy.recovery_window %s", recovery)
			}
		} else {
			msg += fmt.Sprintf(" (the promise %s less the %s band and %s to spare); policy.retry_window %s strikes them", t.Promise, t.Band, Margin, longest+t.Band+Margin)
		}
		notes = append(notes, msg)
	}
	return strings.Join(notes, "; ")
}

// cheapestOf is the shortest strike among points (zero for none).
func cheapestOf(points []Point) time.Duration {
	var d time.Duration
	for i, cp := range points {
		if i == 0 || cp.Cost < d {
			d = cp.Cost
		}
	}
	return d
}
