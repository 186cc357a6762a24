package checker

import (
	"fmt"
	"time"
)

// band is the half-width of the undecided band around the end of a key's
// promise: Policy.Band, widened by the measured clock offset between the
// gateway and the client when the history records one. Zero when no TTL
// was declared (the promise never ends). A request that met a replica
// whose clock was skewed widens it further (skewBand).
func (ix *index) band() time.Duration {
	if ix.pol.TTL <= 0 {
		return 0
	}
	return ix.pol.Band() + abs(ix.h.ClockOffset)
}

// skewIn is the largest measured skew (history.Fault.Skew) of a clock
// fault in force at some time in [from - its skew, to], on the replica
// named by target, or on any replica when target is "". The history's own
// faults and those it lived through count alike.
func (ix *index) skewIn(target string, from, to time.Duration) time.Duration {
	var out time.Duration
	for _, f := range ix.h.Faults {
		s := abs(f.Skew)
		if s != 0 && (target == "" || f.Target == target) && f.Inject <= to && (!f.Healed || f.Heal >= from-s) {
			out = max(out, s)
		}
	}
	return out
}

// skewBand is how much a skewed replica clock widens the band for o, a
// request of epoch e: a replica that took e's first request counted the
// key's age from its own clock, one that took o counted o's time on it,
// and any replica skewed near the promise's end (its sweeper) may have
// forgotten the key that much early.
func (ix *index) skewBand(e *epoch, o *opInfo) time.Duration {
	if !ix.skewed {
		return 0 // every skewIn below would be 0
	}
	replica := func(o *opInfo) string { return fmt.Sprintf("replica%d", o.Replica) }
	first := e.ops[0]
	return max(ix.skewIn(replica(o), o.Invoke, o.Complete),
		ix.skewIn(replica(first), first.Invoke, first.Complete),
		ix.skewIn("", e.start+ix.promise-ix.bandw, o.Complete))
}

// markEdges flags the requests of l that the server may have received
// within band of an epoch's promise end, on either side, given when they
// were sent and answered: the server may have counted one sent just before
// the end as after it (and forgotten the key), or one sent just after as
// before it (and replayed); a request that took long to answer may have
// reached the server late. What such a request got is neither a
// violation nor a pass: checks that would fail on it say UNKNOWN instead.
//
// A request of the previous epoch that the server may have taken past that
// epoch's end (the opener) may have opened the server's next epoch before
// the checker's next epoch opens with a later request: the server's epoch
// may then end as early as the opener's send plus the promise, and a
// request of the checker's epoch sent after that may have found the key
// forgotten (exact-ttl, promise 1s, had a body charged anew 1.2s after such
// an opener judged P1 FAILED). This holds while the checker's next epoch
// opens within the promise of the opener's answer; such early requests
// are openers in turn.
func (ix *index) markEdges(l *lineage) {
	if ix.promise <= 0 {
		return
	}
	var opener *opInfo
	for i, e := range l.epochs {
		var next *opInfo
		var reach time.Duration // how long after next's answer the server's epoch may hold
		for _, o := range e.ops {
			// The server received o somewhere in [Invoke, Complete] and
			// the epoch's first request somewhere after its start: it may
			// have counted up to Complete - start (past the end: it may
			// have forgotten the key), and as little as Invoke - (the
			// first request's answer) (inside: it may have replayed).
			w := ix.bandw + ix.skewBand(e, o)
			d, late := o.Invoke-e.start, o.Complete-e.start
			after := i > 0 && o.Invoke-firstAnswered(l.epochs[i-1]) <= ix.promise+w
			early := opener != nil && o.Invoke-opener.Invoke > ix.promise-w
			past := d > ix.promise-w || late > ix.promise || early
			o.edge = past || after
			if past && next == nil {
				next, reach = o, ix.promise+w
			}
		}
		opener = nil
		if next != nil && i+1 < len(l.epochs) && l.epochs[i+1].start-next.Complete <= reach {
			opener = next
		}
	}
}

// firstAnswered is when the epoch's first request was answered: the
// latest the server can have received it.
func firstAnswered(e *epoch) time.Duration {
	if len(e.ops) == 0 {
		return e.start
	}
	return max(e.ops[0].Complete, e.start)
}

// anyEdge reports whether any of ops was sent at an epoch's edge.
func anyEdge(ops ...*opInfo) bool {
	for _, o := range ops {
		if o != nil && o.edge {
			return true
		}
	}
	return false
}

// undecided is the one rule for what a check could judge only at the edge
// of a promise (markEdges): when edge lists anything, check c is UNKNOWN,
// however clean the rest, and the note part returned lists what was left
// undecided ("" when nothing was).
func (ix *index) undecided(c *CheckResult, edge []string) string {
	if len(edge) > 0 {
		c.Verdict = Worst(c.Verdict, Unknown)
	}
	return listNote("UNKNOWN within ±"+ix.bandw.String()+" of the promise's end (client and server clocks differ)", edge)
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
