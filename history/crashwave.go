package history

import (
	"slices"
	"strings"
	"time"
)

// CrashPoint is one point of a request at which the crash-window family
// strikes: one row of CrashWave.
type CrashPoint struct {
	// Name is how a history names the point, in Fault.Params[ParamCrashPoint].
	Name string
	// Kind is the fault kind that strikes the point, as scenario steps
	// name it: a kind of package faults, a gateway kind as
	// "gateway:<kind>".
	Kind string
	// Cost is about how long striking one payment at the point takes,
	// measured against the reference on 2 cores: a kill and restart about
	// 0.5s, a held charge 0.2s, a gateway or link fault 0.1s.
	Cost time.Duration
	// Restarts says the strike stops a replica (killed and restarted, or
	// frozen and resumed, or a store restarted): seconds for a container,
	// so a wave strikes the point for one payment, not up to MaxStrikes.
	Restarts bool
	// Store is the store the point strikes ("postgres", "redis", "mysql"),
	// "" for a point every target has: a point of a store the target does
	// not need is neither drawn nor asked for (CrashWaveFor).
	Store string
}

// MaxStrikes is the most payments a crash wave strikes at one point that
// does not restart a replica.
const MaxStrikes = 3

// CrashWave is every crash point, the one table of them: the checker's
// crash points (L4 needs each reached), what the crash-window family
// strikes each with, and how long a strike takes, which is what a target's
// promise must leave room for. It lives in package history, the lowest
// package, because the checker, the target's validation and the
// scenario generators all read it and none of them may import another.
// A new crash point is one row (and, for a kind the family has no
// choreography for yet, a case in its strike).
var CrashWave = []CrashPoint{
	{"kill-in-hang", "kill_in_hang", 500 * time.Millisecond, true, ""},                      // SIGKILL while the gateway holds a committed charge
	{"pause-in-hang", "pause", 200 * time.Millisecond, true, ""},                            // SIGSTOP while the gateway holds a committed charge
	{"fail-before-charge", "gateway:fail_before_charge", 100 * time.Millisecond, false, ""}, // the gateway fails before charging (nothing stored)
	{"charge-then-fail", "gateway:charge_then_fail", 100 * time.Millisecond, false, ""},     // the gateway charges, then answers 5xx
	{"charge-then-drop", "gateway:charge_then_drop", 100 * time.Millisecond, false, ""},     // the gateway charges, then drops the connection
	{"reset-gateway-link", "reset_peer", 100 * time.Millisecond, false, ""},                 // the server's link to the gateway is reset
	{"timeout-gateway-link", "timeout", 100 * time.Millisecond, false, ""},                  // the server's link to the gateway times out
	{"down-postgres-link", "down", 100 * time.Millisecond, false, "postgres"},               // the server's link to PostgreSQL is down
	{"down-redis-link", "down", 100 * time.Millisecond, false, "redis"},                     // the server's link to Redis is down
	{"down-mysql-link", "down", 100 * time.Millisecond, false, "mysql"},                     // the server's link to MySQL is down
	{"restart-postgres", "store_restart", time.Second, true, "postgres"},                    // PostgreSQL restarts while the gateway holds a committed charge
	{"restart-redis", "store_restart", 500 * time.Millisecond, true, "redis"},               // Redis restarts (its append-only file kept) while the gateway holds a charge
	{"restart-mysql", "store_restart", 2 * time.Second, true, "mysql"},                      // MySQL restarts while the gateway holds a committed charge
	{"kill-after-response", "kill", 500 * time.Millisecond, true, ""},                       // SIGKILL right after the server answered
}

// CrashWaveFor is the rows of CrashWave a target with these stores has:
// every point but those of stores it does not need. A target without a
// store (keys in memory) has no store link to cut and no store to restart.
func CrashWaveFor(stores []string) []CrashPoint {
	var out []CrashPoint
	for _, p := range CrashWave {
		if p.Store == "" || slices.Contains(stores, p.Store) {
			out = append(out, p)
		}
	}
	return out
}

// CrashPointNames lists CrashWave's point names, in table order.
func CrashPointNames() []string {
	out := make([]string, len(CrashWave))
	for i, p := range CrashWave {
		out[i] = p.Name
	}
	return out
}

// CrashPointNamed finds a crash point's row.
func CrashPointNamed(name string) (CrashPoint, bool) {
	for _, p := range CrashWave {
		if p.Name == name {
			return p, true
		}
	}
	return CrashPoint{}, false
}

// LongestWave is about how long the strikes of the longest crash wave of
// a target with these stores take: every point struck for MaxStrikes
// payments, or one when it restarts a replica or a store. A crash-window
// example's first payment is retried only after them and the recovery
// window, inside its promise.
func LongestWave(stores []string) time.Duration {
	var d time.Duration
	for _, p := range CrashWaveFor(stores) {
		n := MaxStrikes
		if p.Restarts {
			n = 1
		}
		d += time.Duration(n) * p.Cost
	}
	return d
}

// WaveMargin is what a crash wave's room keeps back besides the band:
// the final retries' round trip and one strike that overran its Cost on a
// loaded machine. The runner holds each strike to the room as it plays
// (a payment whose strike would begin too late is left out), so the
// margin need not cover a whole wave's overrun.
const WaveMargin = time.Second

// RetryBy is how long after a wave's first request its final retries
// are sent at the latest: inside the first payment's promise, clear of
// its end's band, WaveMargin to spare.
func RetryBy(p Policy) time.Duration { return p.Promise() - p.Band() - WaveMargin }

// WaveRoom is how long a crash wave's strikes may take under policy p
// with the recovery window between them and the final retries (RetryBy):
// then M6 judges every payment. Zero or less: not even the cheapest
// strike leaves room for the recovery window.
func WaveRoom(p Policy) time.Duration { return RetryBy(p) - p.RecoveryWindow }

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
	Points   []CrashPoint
	Out      []CrashPoint
	RetryAt  time.Duration // when the final retries go, after the first request: RetryBy when !Recovers, else 0 (after the recovery window)
}

// WaveFor fits a crash wave of a target with these stores to policy p:
// with the recovery window before the final retries when some point
// fits that room (WaveRoom), else with the final retries at RetryBy
// when some point fits that; no Points when none fits either.
func WaveFor(stores []string, p Policy) Wave {
	w := Wave{Room: WaveRoom(p), Recovers: true}
	if !anyFits(CrashWaveFor(stores), w.Room) {
		w = Wave{Room: RetryBy(p), RetryAt: RetryBy(p)}
	}
	for _, cp := range CrashWaveFor(stores) {
		if cp.Cost <= w.Room {
			w.Points = append(w.Points, cp)
		} else {
			w.Out = append(w.Out, cp)
		}
	}
	return w
}

func anyFits(points []CrashPoint, room time.Duration) bool {
	for _, cp := range points {
		if cp.Cost <= room {
			return true
		}
	}
	return false
}

// RoomFor is the least promise (max(ttl, retry_window)) that leaves a
// wave room for strikes taking d and the recovery window after them, and
// the most recovery window that does under p: the policy values a report
// names for what did not fit.
func RoomFor(p Policy, d time.Duration) (promise, recovery time.Duration) {
	return d + p.RecoveryWindow + p.Band() + WaveMargin, RetryBy(p) - d
}

// StoreFault says whether f cut a replica off one of its stores (a fault on
// a replicaN-><store> link) or restarted a store (its target is the
// store): the faults of CrashWave's store rows, and any other on the same
// targets.
func StoreFault(f Fault) bool {
	_, to, link := strings.Cut(f.Target, "->")
	if !link {
		to = f.Target
	}
	for _, p := range CrashWave {
		if p.Store != "" && p.Store == to {
			return true
		}
	}
	return false
}
