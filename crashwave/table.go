package crashwave

import (
	"slices"
	"strings"
	"time"
)

// Point is one point of a request at which the crash-window family
// strikes: one row of Table.
type Point struct {
	// Name is how a history names the point, in
	// Fault.Params[history.ParamCrashPoint].
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
	// not need is neither drawn nor asked for (For).
	Store string
}

// Table is every crash point, the one table of them: the checker's
// crash points (L4 needs each reached), what the crash-window family
// strikes each with, and how long a strike takes, which is what a target's
// promise must leave room for. It lives in a package that imports
// nothing of idemcheck, below every package that reads it: the history
// (the gateway's key lifetime), the checker, the target's validation and
// the scenario generators.
// A new crash point is one row (and, for a kind the family has no
// choreography for yet, a case in its strike).
var Table = []Point{
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

// For is the rows of Table a target with these stores has: every point
// but those of stores it does not need. A target without a store (keys
// in memory) has no store link to cut and no store to restart.
func For(stores []string) []Point {
	var out []Point
	for _, p := range Table {
		if p.Store == "" || slices.Contains(stores, p.Store) {
			out = append(out, p)
		}
	}
	return out
}

// Names lists Table's point names, in table order.
func Names() []string {
	out := make([]string, len(Table))
	for i, p := range Table {
		out[i] = p.Name
	}
	return out
}

// Named finds a crash point's row.
func Named(name string) (Point, bool) {
	for _, p := range Table {
		if p.Name == name {
			return p, true
		}
	}
	return Point{}, false
}

// StoreTarget says whether a fault on this target (a history.Fault's
// Target) cut a replica off one of its stores (a replicaN-><store> link)
// or restarted a store (its target is the store): the faults of Table's
// store rows, and any other on the same targets.
func StoreTarget(target string) bool {
	_, to, link := strings.Cut(target, "->")
	if !link {
		to = target
	}
	for _, p := range Table {
		if p.Store != "" && p.Store == to {
			return true
		}
	}
	return false
}
