package families

import (
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// Time faults: a replica whose clock is ahead of or behind the database,
// the gateway and its peers (clock_skew), and a replica whose database
// sessions run in a zone other than UTC (db_timezone). late-retry draws
// them around a payment's first request and its retry inside the TTL, on
// the retry's replica: where a server that mixes its own clock with the
// database's, or a zone-less timestamp with now(), forgets a live key.

// maxSkewSeconds caps the drawn clock offset: seconds, as a host whose
// time daemon stopped drifts, not hours.
const maxSkewSeconds = 3

// MaxSkew is the largest clock offset drawn against a target: whole
// seconds, at most maxSkewSeconds, and at most a quarter of the promise
// beyond the TTL. The checker widens its band around the promise's end by
// the measured offset (up to a second more, the Date header's
// resolution), and late-retry keeps its probes clear of that band, so
// the offset must leave the retry window room to probe; a target that
// promises no more than its TTL gets none.
func MaxSkew(p target.Policy) time.Duration {
	room := (p.Promise() - p.TTL) / 4
	return min(maxSkewSeconds*time.Second, room.Truncate(time.Second))
}

// skewAllowance is how far past the drawn offset the checker's band may
// reach: the Date header's second and a margin for the measurement.
const skewAllowance = 1500 * time.Millisecond

// timeZones are the zones a replica's database sessions are put in,
// mostly east of UTC, where a zone-less timestamp written from a UTC
// clock already reads as past (west of UTC it reads as later, which
// loses a server nothing but memory).
var timeZones = []string{"Asia/Kolkata", "Asia/Tokyo", "Pacific/Auckland", "Asia/Kathmandu", "Australia/Sydney", "America/New_York"}

// clockFaults are the time faults drawn for one example: none, one or
// both, each on the same replica.
type clockFaults struct {
	skew time.Duration // 0: no clock_skew
	zone string        // "": no db_timezone
}

// drawClockFaults draws the skew in one example of 12 and the zone in
// one of 8, and against containers (target.Containers) only in the
// quarter of the examples where two coin draws both come up:
// each costs two relaunches of a replica, during which the other
// examples' requests wait at the gate, and which the other examples in
// flight live through (a recovery in progress on that replica is cut,
// and a crash wave's convergence counts from the relaunch's end). A
// process relaunches in about 0.1 s; a container is replaced (stopped,
// removed, created, started, readied: 1.0-1.5 s measured), so at the
// process odds the relaunches (16 in one 50 s run) held the gate for
// much of a container run and crash-window played one wave whose keys'
// promises ended before the environment was quiet (reference --docker:
// M6 UNKNOWN on 7 of 10 seeds, one more with no crash judged at all).
// At a quarter of the odds, about 1 late-retry example in 20 carries
// a time fault: most container runs (some 40 examples) still draw one.
// The skew, when drawn, is ±(1..MaxSkew) s; the zone only for a target with a SQL database (the
// zone reaches nothing else). A run that asks for neither
// (certify --time-faults=false, target.Target.NoTimeFaults) gets none.
//
// The gate is held for the relaunches alone (faults.Momentary), not
// for the wait between them, and the state in force holds no other
// example's convergence back (history.Skews): held from injection to
// heal, with the relaunches counted as one disruption, the time faults
// starved crash-window on a target whose promise is short against that
// span (examples/shop.yaml: M6 UNKNOWN in 2 of 2 README walks).
func drawClockFaults(t *rapid.T, tg *target.Target) clockFaults {
	var c clockFaults
	if tg.NoTimeFaults {
		return c
	}
	if (tg.Containers || slowDrain(tg)) && !(oneIn(t, 2, "container_time_faults") && oneIn(t, 2, "container_time_faults_too")) {
		return c
	}
	if n := int(MaxSkew(tg.Policy) / time.Second); n > 0 && oneIn(t, 12, "clock_skewed") {
		c.skew = time.Duration(rapid.IntRange(1, n).Draw(t, "clock_skew_seconds")) * time.Second
		if rapid.Bool().Draw(t, "clock_behind") {
			c.skew = -c.skew
		}
	}
	sql := slices.ContainsFunc(tg.StoreNames(), func(s string) bool { return s == "postgres" || s == "mysql" })
	if sql && oneIn(t, 8, "db_session_zoned") {
		c.zone = rapid.SampledFrom(timeZones).Draw(t, "db_time_zone")
	}
	return c
}

// slowDrain says a relaunch waits long for the gate: it holds the other
// examples' requests out until those in flight have drained, and
// concurrent-duplicates keeps requests in flight as long as the gateway
// latency it draws (MaxGatewayLatency). Past drainAtProcessOdds, time
// faults are drawn at the containers' quarter of the odds: with
// max_wait 10s (requests held 15s) the relaunches at the process odds
// held the gate for most of a 50s run (key-reuse played 1378 examples
// with them, 4224 without).
func slowDrain(tg *target.Target) bool { return MaxGatewayLatency(tg) > drainAtProcessOdds }

const drainAtProcessOdds = 3 * time.Second

// band is how much the drawn faults widen the checker's band around the
// promise's end.
func (c clockFaults) band() time.Duration {
	if c.skew == 0 {
		return 0
	}
	return max(c.skew, -c.skew) + skewAllowance
}

// inject adds the faults on replica r; heal removes them.
func (c clockFaults) inject(b *builder, r int) {
	if c.skew != 0 {
		b.fault(scenarios.Fault{ID: "clock", Kind: "clock_skew", Replica: &r, Params: map[string]string{"offset": fmt.Sprintf("%+ds", int(c.skew/time.Second))}})
	}
	if c.zone != "" {
		b.fault(scenarios.Fault{ID: "zone", Kind: "db_timezone", Replica: &r, Params: map[string]string{"zone": c.zone}})
	}
}

func (c clockFaults) heal(b *builder) {
	if c.zone != "" {
		b.heal("zone")
	}
	if c.skew != 0 {
		b.heal("clock")
	}
}

// oneIn is true in one draw of n; it shrinks to false.
func oneIn(t *rapid.T, n int, label string) bool {
	return rapid.IntRange(0, n-1).Draw(t, label) == n-1
}
