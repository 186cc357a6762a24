package families

import (
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// probeWindows are the stretches of time (since the first request) where
// a late-retry probe proves something: inside the TTL, and past it but
// inside the promise, each clear of the UNKNOWN band around its ends by
// half a band more (the first request is sent a little after the
// scenario's clock starts).
type probeWindows struct {
	earlyEnd           time.Duration // a retry in (0, earlyEnd] must be deduplicated; 0 = no room
	lateStart, lateEnd time.Duration // a retry in [lateStart, lateEnd] is inside the retry window past the TTL; lateEnd < lateStart = no room
}

func windowsOf(p target.Policy, skew time.Duration) probeWindows {
	clear := p.Band() + p.Band()/2
	return probeWindows{earlyEnd: max(p.TTL-clear, 0), lateStart: p.TTL + clear, lateEnd: p.Promise() - clear - skew}
}

// drawProbes draws when late-retry sends its retries, as multiples of the
// TTL since the first request, ascending: one inside the TTL, then up to
// two spread across (TTL, retry window] and always one just inside the
// window's end, where a server that keeps keys for a few TTLs while
// promising many is caught. No probe falls in the
// band around the TTL or the window's end (widened by skew, what a
// skewed clock adds to it), where the checker can only say UNKNOWN.
func drawProbes(t *rapid.T, p target.Policy, skew time.Duration) []float64 {
	w := windowsOf(p, skew)
	var at []time.Duration
	if w.earlyEnd > 0 {
		permille := rapid.IntRange(1, 1000).Draw(t, "early_retry_permille_of_ttl_less_band")
		at = append(at, w.earlyEnd*time.Duration(permille)/1000)
	}
	if w.lateEnd >= w.lateStart {
		n := rapid.IntRange(0, 2).Draw(t, "late_retries_inside_window")
		var mid []time.Duration
		for range n {
			permille := rapid.IntRange(0, 1000).Draw(t, "late_retry_permille_of_window")
			mid = append(mid, w.lateStart+(w.lateEnd-w.lateStart)*time.Duration(permille)/1000)
		}
		slices.Sort(mid)
		at = append(at, mid...)
		at = append(at, w.lateEnd)
	}
	out := make([]float64, 0, len(at))
	for _, d := range slices.Compact(at) {
		out = append(out, float64(d)/float64(p.TTL))
	}
	return out
}

// lateRetryTime is late-retry's declared wait: its last probe, just
// inside the promise's end (or inside the TTL when the retry window adds
// nothing), or where probes pass the TTL the duplicates sent just past
// the promise (pastPromise, from the first request's answer: its
// latency more), plus a band for that request's own answer.
func lateRetryTime(tg *target.Target) time.Duration {
	w := windowsOf(tg.Policy, 0)
	last := w.earlyEnd
	if w.lateEnd >= w.lateStart {
		last = pastPromise(tg.Policy) + sweepRaceLatency(tg.Policy)
	}
	return last + tg.Policy.Band()
}

// sweepRaceLatency is how slow the gateway is for the duplicates past the
// promise: half of max_wait, so that the one that claims the key is
// still charging when the others are answered, and a server that waits
// for it (up to max_wait) gets its answer.
func sweepRaceLatency(p target.Policy) time.Duration { return p.MaxWait / 2 }

// pastPromise is when late-retry sends its duplicates past the promise
// (sweepRace), counted from the first request's answer, as the checker
// counts a key's age past its promise: the promise's end and the band
// around it, with a band more.
func pastPromise(p target.Policy) time.Duration {
	return p.Promise() + 2*p.Band()
}

// sweepRace draws how many duplicates of the payment, if any, late-retry
// sends together just past the promise, when the key may be deleted,
// with the gateway slow for them (sweepRaceLatency):
// two or three in one example in two where probes pass the TTL and no
// clock is skewed (the checker's band around the promise's end would
// widen past them), on drawn replicas. A server that sweeps keys past
// their window meets the
// sweep and a re-claim racing each other there. Of the duplicates that
// find the key gone and claim it again, one wins; the others must read
// what the winner left (wait for it, or refuse a different request),
// not answer "in progress" at once (R3). The answers are a new key
// epoch's, past the promise: a new charge there is no double charge.
func sweepRace(t *rapid.T, p target.Policy, c clockFaults) int {
	w := windowsOf(p, 0)
	if w.lateEnd < w.lateStart || c.skew != 0 || !rapid.Bool().Draw(t, "duplicates_past_promise") {
		return 0
	}
	return rapid.IntRange(2, 3).Draw(t, "duplicates_past_promise_count")
}

// lateRetryPart cuts the retry window to what room lets one example
// probe: its probes then reach as far past the TTL as fits (a server
// that forgets keys at the TTL shows it at the first probe past it), or
// stay inside the TTL when no probe past it fits. ok is false when not
// even a retry inside the TTL fits.
func lateRetryPart(tg *target.Target, room time.Duration) (*target.Target, string, bool) {
	p := tg.Policy
	clear := p.Band() + p.Band()/2
	part := *tg
	// lateRetryTime is window + 3 bands + the gateway's latency for the
	// duplicates past the promise once the window passes the TTL by two
	// clears (room for one probe past the TTL: those duplicates come
	// last), else the TTL's early probe: earlyEnd + band.
	// The part's duplicates past its own promise, inside the target's,
	// are kept a band clear of the target's promise's end too.
	switch w := min(room-3*p.Band()-sweepRaceLatency(p), p.Promise()-3*p.Band()); {
	case w >= p.TTL+2*clear && w < p.Promise():
		part.Policy.RetryWindow = w.Truncate(100 * time.Millisecond)
		return &part, fmt.Sprintf("retries up to %s of the %s promise", (part.Policy.RetryWindow - clear).Round(100*time.Millisecond), p.Promise()), true
	case max(p.TTL-clear, 0)+p.Band() <= room:
		part.Policy.RetryWindow = 0
		return &part, fmt.Sprintf("retries inside the TTL only, none in (%s, %s]", p.TTL, p.Promise()), true
	}
	return nil, "", false
}

func init() {
	register(Family{Name: "late-retry", Level: "L5", Rank: 40, Gen: genLateRetry,
		Doc:     "retries inside the TTL and spread across (TTL, retry window], up to just inside its end, then some duplicates together just past it, racing a sweep of the key; some payments declined",
		MinTime: lateRetryTime, Part: lateRetryPart, Waits: true, Decides: "E2",
		Limit: func(tg *target.Target) string {
			return "policy.ttl = " + tg.Policy.TTL.String() + ", policy.retry_window = " + tg.Policy.RetryWindow.String()
		}})
}

// genLateRetry draws a payment and its retries. The time faults
// (drawClockFaults), when drawn, are in force from before the first
// request until the first retry inside the TTL was answered, on that
// retry's replica; the later probes meet healthy replicas.
func genLateRetry(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario {
	var b builder
	tenant := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant")
	amount := drawAmount(t)
	clock := drawClockFaults(t, tg)
	probes := drawProbes(t, tg.Policy, clock.band())
	first := scenarios.Send{ID: "first", Replica: -1, Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Purpose: "first"}
	early := len(probes) > 0 && probes[0] < 1 // a retry inside the TTL
	retryReplica := make([]int, len(probes))
	for i := range probes {
		retryReplica[i] = rapid.IntRange(0, replicas-1).Draw(t, "replica")
	}
	if early {
		clock.inject(&b, retryReplica[0])
	}
	if drawDecline(t) {
		b.fault(declineFault("o0"))
		b.send(first)
		b.heal("decline_o0")
	} else {
		b.send(first)
	}
	for i, at := range probes {
		b.wait(scenarios.Wait{TTL: at})
		probe := scenarios.Send{ID: fmt.Sprintf("retry%d", i), Client: i + 1, Replica: retryReplica[i], Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Purpose: fmt.Sprintf("late-retry@%gxTTL", at)}
		if i == len(probes)-1 {
			// The key's last request inside its promise: an indeterminate
			// answer (a server still recovering from another example's
			// fault) is retried while that stays clear of the promise's
			// edge, or convergence (M6) could not be judged on the key.
			probe.RetryWithin = at + float64(tg.Policy.Band()/2)/float64(tg.Policy.TTL)
		}
		b.send(probe)
		if i == 0 && early {
			clock.heal(&b)
		}
	}
	if n := sweepRace(t, tg.Policy, clock); n > 0 {
		b.wait(scenarios.Wait{TTL: float64(pastPromise(tg.Policy)) / float64(tg.Policy.TTL), From: first.ID})
		b.fault(scenarios.Fault{ID: "slow_o0", Kind: "gateway:slow", Order: "o0", Params: map[string]string{"latency": sweepRaceLatency(tg.Policy).String()}})
		for i := range n {
			b.send(scenarios.Send{ID: fmt.Sprintf("past%d", i), Client: len(probes) + 1 + i, Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica"),
				Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Async: true, Purpose: PurposePastPromise})
		}
		b.waitAll()
		b.heal("slow_o0")
	}
	return b.scenario("late-retry")
}

// PurposePastPromise is the purpose of late-retry's duplicates sent
// together just past the promise (sweepRace).
const PurposePastPromise = "duplicate-past-promise"
