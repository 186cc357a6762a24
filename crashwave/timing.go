package crashwave

import "time"

// MaxStrikes is the most payments a crash wave strikes at one point that
// does not restart a replica.
const MaxStrikes = 3

// Terms is what a crash wave's timing reads of a target's policy
// (history.Policy.WaveTerms gives it): the promise max(ttl,
// retry_window), the half-width of the undecided band about the
// promise's end, and the recovery window.
type Terms struct {
	Promise  time.Duration
	Band     time.Duration
	Recovery time.Duration
}

// Margin is what a crash wave's room keeps back besides the band: the
// final retries' round trip and one strike that overran its Cost on a
// loaded machine. The runner holds each strike to the room as it plays
// (a payment whose strike would begin too late is left out), so the
// margin need not cover a whole wave's overrun.
const Margin = time.Second

// RetryBy is how long after a wave's first request its final retries
// are sent at the latest: inside the first payment's promise, clear of
// its end's band, Margin to spare.
func RetryBy(t Terms) time.Duration { return t.Promise - t.Band - Margin }

// Room is how long a crash wave's strikes may take under terms t with
// the recovery window between them and the final retries (RetryBy):
// then M6 judges every payment. Zero or less: not even the cheapest
// strike leaves room for the recovery window.
func Room(t Terms) time.Duration { return RetryBy(t) - t.Recovery }

// Wave is how a crash wave fits a policy: how long its strikes may take
// (Room), and, when the recovery window does not fit after a single
// strike (Recovers false), that the final retries are sent at RetryBy
// all the same: M1, M3 and M4 judge every struck payment, and M6 those
// whose retry got a definitive answer (one still indeterminate before
// the window passed is UNKNOWN, naming the policy value that covers it).
// Points is what it may strike: the target's points whose one strike
// fits Room; Out, the others.
type Wave struct {
	Room     time.Duration
	Recovers bool
	Points   []Point
	Out      []Point
	RetryAt  time.Duration // when the final retries go, after the first request: RetryBy when !Recovers, else 0 (after the recovery window)
}

// Fit fits a crash wave of a target with these stores to terms t: with
// the recovery window before the final retries when some point fits
// that room (Room), else with the final retries at RetryBy when some
// point fits that; no Points when none fits either.
func Fit(stores []string, t Terms) Wave {
	w := Wave{Room: Room(t), Recovers: true}
	if !anyFits(For(stores), w.Room) {
		w = Wave{Room: RetryBy(t), RetryAt: RetryBy(t)}
	}
	for _, cp := range For(stores) {
		if cp.Cost <= w.Room {
			w.Points = append(w.Points, cp)
		} else {
			w.Out = append(w.Out, cp)
		}
	}
	return w
}

// PlannedStrikes is the wall time a crash wave's strikes are budgeted
// before its recovery window when planning (Planned), at most its room
// (Room), in either mode: a restart takes seconds in a container. It
// plans budgets only; the runner holds each strike to the room as it
// plays.
const PlannedStrikes = 8 * time.Second

// Planned is how long wave w, fitted to terms t, takes at least from its
// first strike: its strikes (PlannedStrikes, at most its room) and one
// recovery window, or, when the recovery window does not fit before the
// final retries (!Recovers), until they go (RetryAt).
func (w Wave) Planned(t Terms) time.Duration {
	if !w.Recovers {
		return w.RetryAt
	}
	return min(PlannedStrikes, max(w.Room, 0)) + t.Recovery
}

func anyFits(points []Point, room time.Duration) bool {
	for _, cp := range points {
		if cp.Cost <= room {
			return true
		}
	}
	return false
}

// RoomFor is the least promise (max(ttl, retry_window)) that leaves a
// wave room for strikes taking d and the recovery window after them, and
// the most recovery window that does under t: the policy values a report
// names for what did not fit.
func RoomFor(t Terms, d time.Duration) (promise, recovery time.Duration) {
	return d + t.Recovery + t.Band + Margin, RetryBy(t) - d
}
