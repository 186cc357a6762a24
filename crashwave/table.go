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
	// "gateway:<kind>". It names the fault only; how the strike is
	// played around the payment's first request is its Choreography.
	Kind string
	// Choreography is how the crash-window family plays the strike: what
	// it injects around the payment's first request, when, and how it
	// heals (one choreography serves several kinds: a gateway rule any
	// gateway kind, a gateway link fault reset_peer and timeout).
	Choreography Choreography
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
// A new crash point is one row; a new way of playing a strike is also a
// Choreography here and its case in the family's strike
// (families/crash_window.go).
var Table = []Point{
	{"kill-in-hang", "kill_in_hang", KillInHold, 500 * time.Millisecond, true, ""},                       // SIGKILL while the gateway holds a committed charge
	{"pause-in-hang", "pause", PauseInHold, 200 * time.Millisecond, true, ""},                            // SIGSTOP while the gateway holds a committed charge
	{"fail-before-charge", "gateway:fail_before_charge", GatewayRule, 100 * time.Millisecond, false, ""}, // the gateway fails before charging (nothing stored)
	{"charge-then-fail", "gateway:charge_then_fail", GatewayRule, 100 * time.Millisecond, false, ""},     // the gateway charges, then answers 5xx
	{"charge-then-drop", "gateway:charge_then_drop", GatewayRule, 100 * time.Millisecond, false, ""},     // the gateway charges, then drops the connection
	{"reset-gateway-link", "reset_peer", GatewayLink, 100 * time.Millisecond, false, ""},                 // the server's link to the gateway is reset
	{"timeout-gateway-link", "timeout", GatewayLink, 100 * time.Millisecond, false, ""},                  // the server's link to the gateway times out
	{"down-postgres-link", "down", StoreLink, 100 * time.Millisecond, false, "postgres"},                 // the server's link to PostgreSQL is down
	{"down-redis-link", "down", StoreLink, 100 * time.Millisecond, false, "redis"},                       // the server's link to Redis is down
	{"down-mysql-link", "down", StoreLink, 100 * time.Millisecond, false, "mysql"},                       // the server's link to MySQL is down
	{"restart-postgres", "store_restart", StoreRestartInHold, time.Second, true, "postgres"},             // PostgreSQL restarts while the gateway holds a committed charge
	{"restart-redis", "store_restart", StoreRestartInHold, 500 * time.Millisecond, true, "redis"},        // Redis restarts (its append-only file kept) while the gateway holds a charge
	{"restart-mysql", "store_restart", StoreRestartInHold, 2 * time.Second, true, "mysql"},               // MySQL restarts while the gateway holds a committed charge
	{"kill-after-response", "kill", KillAfterAnswer, 500 * time.Millisecond, true, ""},                   // SIGKILL right after the server answered
	{"drop-client-in-hang", "down", ClientLinkInHold, 200 * time.Millisecond, false, ""},                 // the client's link to the replica goes down while the gateway holds a committed charge
}

// Choreography is how the crash-window family plays a point's strike
// around a payment's first request (Point.Choreography). It is apart
// from the point's fault kind, which names what is injected.
type Choreography int

// The choreographies. The in-hold ones strike while the gateway holds
// the payment's committed charge (a charge_then_hang rule), then
// release it.
const (
	// GatewayRule arms a gateway rule of the point's kind for the
	// payment's order, firing once, sends the first request and heals it.
	GatewayRule Choreography = iota + 1
	// GatewayLink injects the point's kind on the replica's link to the
	// gateway (downstream) around the first request.
	GatewayLink
	// StoreLink injects the point's kind on the replica's link to the
	// point's store around the first request.
	StoreLink
	// KillInHold kills the replica while the gateway holds the charge,
	// releases the held answer into nothing and restarts the replica.
	KillInHold
	// PauseInHold freezes the replica while the gateway holds the
	// charge, releases it and thaws the replica.
	PauseInHold
	// StoreRestartInHold restarts the point's store (the point's kind)
	// while the gateway holds the charge, then releases it.
	StoreRestartInHold
	// KillAfterAnswer kills the replica right after it answered the
	// first request, and restarts it.
	KillAfterAnswer
	// ClientLinkInHold takes the client's link to the replica down (the
	// point's kind) while the gateway holds the charge: the client's
	// request is cut (an indeterminate answer) and the server's request
	// context cancelled while its handler still waits; then the charge is
	// released, the handler finishes for a client that is gone, and the
	// link comes back.
	ClientLinkInHold
)

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
