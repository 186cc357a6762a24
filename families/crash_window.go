package families

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/crashwave"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// crash-window plays one wave at a time: a second wave in flight strikes
// during the first one's recovery window, which then counts from the
// second's heal (runner/live.go), and a server that never recovers would
// be found a wave later.
func init() {
	register(Family{Name: "crash-window", Level: "L4", Rank: 30, Gen: genCrash,
		Doc:     "a wave of payments struck at every crash point the policy leaves room for (kills, pauses, gateway faults, link faults, store restarts), one recovery window, then retries inside the promise",
		MinTime: waveTime,
		Fits:    (*target.Target).CrashWindowFits, Caveat: (*target.Target).CrashPointsLeftOut, Workers: 1, Crashes: true, Solo: Solo,
		Limit: func(tg *target.Target) string { return "policy.recovery_window = " + tg.Policy.RecoveryWindow.String() }})
}

// waveTime is how long a wave takes at least: the other examples'
// requests in flight drained before its first strike (the gate keeps
// them out of its faults; concurrent-duplicates' are held by a gateway as
// slow as MaxGatewayLatency), then its strikes and one recovery window
// as planned (crashwave.Wave.Planned). A wave started with less left of
// the budget is cut at the run's hard end, unjudged, and holds every
// family's requests at the gate until then (max_wait 10s: a second wave
// started 23s before the end was cut, and the run ended 5s late).
func waveTime(tg *target.Target) time.Duration {
	terms := tg.Policy.WaveTerms()
	return MaxGatewayLatency(tg) + crashwave.Fit(tg.StoreNames(), terms).Planned(terms)
}

// genCrash draws a crash wave: every point of crashwave.Table the
// target has (a store's points only when it needs that store) strikes
// 1 to MaxStrikes payments of its own (one when it restarts a replica),
// so that a single example (one recovery window) covers every point,
// whatever the seed. A point whose one strike does not fit the policy's
// room (crashwave.Fit) is left out (target.CrashPointsLeftOut names
// it), and when not even one strike leaves room for the recovery window
// before the final retries, they are sent inside the promise all the
// same (CrashPayment.Within), M6 judging what it can; when the others' first strikes do not all fit the room together,
// they are struck in a drawn order, so that the run's waves between them
// cover every point that fits. Each payment's strike begins only while
// the room still holds it (CrashPayment.By, measured by the runner as
// the wave plays, not estimated), so a slow machine strikes fewer
// payments rather than send final retries past the promise. Each
// payment's first request meets its point's fault; then some payments
// retry during recovery, the wave waits out the recovery window once,
// and every payment retries inside its promise. The checker partitions
// by key and order, so every payment is judged on its own; a failing
// wave is shrunk by rapid (fewer payments per point) and then re-played
// with only the payments that failed (Solo).
func genCrash(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario {
	w := crashwave.Fit(tg.StoreNames(), tg.Policy.WaveTerms())
	points, room := w.Points, w.Room
	var pays []CrashPayment
	pay := func(cp crashwave.Point) {
		pays = append(pays, CrashPayment{Point: cp.Name,
			Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica"),
			Tenant:  rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant"),
			Amount:  drawAmount(t),
			Early:   rapid.IntRange(0, 1).Draw(t, "early_retries"),
			Final:   rapid.IntRange(0, replicas-1).Draw(t, "final_replica"),
			By:      max(room-cp.Cost, time.Nanosecond), // zero would mean no bound
			Within:  w.RetryAt})
	}
	if len(w.Out) == 0 && singles(points) <= room {
		for _, cp := range points {
			for range drawStrikes(t, cp) {
				pay(cp)
			}
		}
		return CrashWave(pays)
	}
	order := rapid.Permutation(points).Draw(t, "strike_order")
	more := make([]int, len(order))
	for i, cp := range order {
		more[i] = drawStrikes(t, cp) - 1
		pay(cp)
	}
	for i, cp := range order {
		for ; more[i] > 0; more[i]-- {
			pay(cp)
		}
	}
	return CrashWave(pays)
}

// drawStrikes draws how many payments a wave strikes at cp: 1 to
// MaxStrikes, one for a point that restarts a replica or a store.
func drawStrikes(t *rapid.T, cp crashwave.Point) int {
	if cp.Restarts {
		return 1
	}
	return rapid.IntRange(1, crashwave.MaxStrikes).Draw(t, "payments_"+cp.Name)
}

// singles is how long striking one payment at each of points takes.
func singles(points []crashwave.Point) time.Duration {
	var d time.Duration
	for _, cp := range points {
		d += cp.Cost
	}
	return d
}

// CrashPayment is one payment of a crash wave: the point that strikes its
// first request, on which replica, and its retries.
type CrashPayment struct {
	Point   string
	Replica int
	Tenant  int
	Amount  int64
	Early   int // retries during recovery
	Final   int // replica of the retry after recovery
	// By is the latest its strike may begin after the wave's first
	// request (Step.Before): the wave's room less its cost; zero, no
	// bound.
	By time.Duration
	// Within, when set, is when the wave's final retries go at the
	// latest, after its first request (Wait.Within): the policy leaves no
	// room for the recovery window before them (crashwave.Wave.RetryAt).
	Within time.Duration
}

// Purposes of a crash wave's requests (scenarios.Send.Purpose): a
// payment's first request names its point after crashPurpose.
const (
	crashPurpose = "crash:"
	earlyPurpose = "retry-during-recovery"
	finalPurpose = "retry-after-recovery"
)

// CrashWave is the crash-window scenario of the given payments; payment i
// has key k<i> and order o<i>. WavePayments reads the payments back, so
// that Solo can re-build it with fewer.
func CrashWave(pays []CrashPayment) scenarios.Scenario {
	var b builder
	for i, pay := range pays {
		first := scenarios.Send{ID: fmt.Sprintf("first%d", i), Client: i, Replica: pay.Replica, Tenant: pay.Tenant,
			Key: fmt.Sprintf("k%d", i), Order: fmt.Sprintf("o%d", i), Amount: pay.Amount, Purpose: crashPurpose + pay.Point}
		n := len(b.steps)
		strike(&b, pay.Point, pay.Replica, first)
		for j := n; j < len(b.steps); j++ {
			b.steps[j].Strike = first.Order
		}
		b.steps[n].Before = pay.By
	}
	for i, pay := range pays {
		for e := range pay.Early {
			b.send(scenarios.Send{ID: fmt.Sprintf("early%d_%d", i, e), Client: i, Replica: pay.Final, Tenant: pay.Tenant, Key: fmt.Sprintf("k%d", i), Order: fmt.Sprintf("o%d", i), Amount: pay.Amount, Purpose: earlyPurpose, Async: true})
		}
	}
	b.waitAll()
	b.wait(scenarios.Wait{Recovery: true, Within: pays[0].Within})
	for i, pay := range pays {
		b.send(scenarios.Send{ID: fmt.Sprintf("final%d", i), Client: i, Replica: pay.Final, Tenant: pay.Tenant, Key: fmt.Sprintf("k%d", i), Order: fmt.Sprintf("o%d", i), Amount: pay.Amount, Purpose: finalPurpose, Async: true, Converge: true})
	}
	b.waitAll()
	return b.scenario("crash-window")
}

// WavePayments reads back the payments a crash wave was built from
// (CrashWave), in order, from its steps: a payment's first request (its
// point in its purpose, its replica, tenant and amount), the first step
// of its strike (By), its retries during recovery (Early) and after it
// (Final), and the recovery wait (Within). None for a scenario that is
// not a crash wave.
func WavePayments(sc scenarios.Scenario) []CrashPayment {
	var pays []CrashPayment
	index := map[string]int{} // a payment's symbolic order -> its index
	var within time.Duration
	for _, s := range sc.Steps {
		switch {
		case s.Strike != "" && s.Send == nil:
			if _, ok := index[s.Strike]; !ok { // the first step of its strike
				index[s.Strike] = len(pays)
				pays = append(pays, CrashPayment{By: s.Before})
			}
		case s.Wait != nil && s.Wait.Recovery:
			within = s.Wait.Within
		case s.Send == nil:
		case strings.HasPrefix(s.Send.Purpose, crashPurpose):
			i, ok := index[s.Send.Order]
			if !ok { // its strike begins with it (a kill after the answer)
				i, index[s.Send.Order] = len(pays), len(pays)
				pays = append(pays, CrashPayment{By: s.Before})
			}
			pays[i].Point = strings.TrimPrefix(s.Send.Purpose, crashPurpose)
			pays[i].Replica, pays[i].Tenant, pays[i].Amount = s.Send.Replica, s.Send.Tenant, s.Send.Amount
		case s.Send.Purpose == earlyPurpose:
			if i, ok := index[s.Send.Order]; ok {
				pays[i].Early++
			}
		case s.Send.Purpose == finalPurpose:
			if i, ok := index[s.Send.Order]; ok {
				pays[i].Final = s.Send.Replica
			}
		}
	}
	for i := range pays {
		pays[i].Within = within
	}
	return pays
}

// Solo re-builds a crash wave with only the payments of the given
// symbolic orders ("o3"), to re-play a failing payment alone (the
// crash-window family's Family.Solo); ok is false for a scenario that
// is not a wave, or when it names none of its payments or all of them.
func Solo(sc scenarios.Scenario, orders []string) (scenarios.Scenario, bool) {
	pays := WavePayments(sc)
	var keep []CrashPayment
	for i, pay := range pays {
		if slices.Contains(orders, fmt.Sprintf("o%d", i)) {
			keep = append(keep, pay)
		}
	}
	if len(keep) == 0 || len(keep) == len(pays) {
		return scenarios.Scenario{}, false
	}
	solo := CrashWave(keep)
	solo.Name, solo.Seed = sc.Name, sc.Seed
	return solo, true
}

// strike plays a payment's first request with its crash point's fault
// around it; every fault is healed and every replica back before strike
// returns. Every fault and process step carries the point and payment.
// The point's choreography (crashwave.Point.Choreography) picks how: a
// kill, a pause or a store restart inside the gateway's hold of the
// charge (strikeInHold), a kill after the answer, a link fault of the
// point's kind on the replica's gateway link or on its link to the
// point's store, or a gateway rule of the point's kind for the payment's
// order, firing once.
func strike(b *builder, point string, replica int, first scenarios.Send) {
	r := replica
	at := func(s scenarios.Step) scenarios.Step { s.Point, s.Payment = point, first.Order; return s }
	cp, _ := crashwave.Named(point)
	switch cp.Choreography {
	case crashwave.KillInHold, crashwave.PauseInHold, crashwave.StoreRestartInHold, crashwave.ClientLinkInHold:
		strikeInHold(b, at, cp, r, first)
	case crashwave.GatewayRule:
		id := "gw_" + first.Order
		b.add(at(scenarios.Step{Fault: &scenarios.Fault{ID: id, Kind: cp.Kind, Order: first.Order, Params: map[string]string{"times": "1"}}}))
		b.send(first)
		b.heal(id)
	case crashwave.GatewayLink:
		id := "net_" + first.Order
		b.add(at(scenarios.Step{Fault: &scenarios.Fault{ID: id, Kind: cp.Kind, Link: fmt.Sprintf("replica%d->gateway", r), Direction: "downstream", Params: map[string]string{"timeout": "100ms"}}}))
		b.send(first)
		b.heal(id)
	case crashwave.StoreLink:
		id := "db_" + first.Order
		b.add(at(scenarios.Step{Fault: &scenarios.Fault{ID: id, Kind: cp.Kind, Link: fmt.Sprintf("replica%d->%s", r, cp.Store)}}))
		b.send(first)
		b.heal(id)
	case crashwave.KillAfterAnswer:
		b.send(first)
		b.add(at(scenarios.Step{Kill: &r}))
		b.add(scenarios.Step{Restart: &r})
	default:
		panic(fmt.Sprintf("crash point %s: no strike for its choreography %d", cp.Name, cp.Choreography))
	}
}

// strikeInHold strikes while the gateway holds the payment's committed
// charge (charge_then_hang): the replica is killed (and restarted once
// the held answer is released into nothing), frozen and thawed, its
// store restarted, or the client's link to it taken down (the client
// sees its request cut, the server's handler finishes for a client that
// is gone), and then the charge is released.
func strikeInHold(b *builder, at func(scenarios.Step) scenarios.Step, cp crashwave.Point, r int, first scenarios.Send) {
	hang := "hang_" + first.Order
	async := first
	async.Async = true
	b.add(at(scenarios.Step{Fault: &scenarios.Fault{ID: hang, Kind: "gateway:charge_then_hang", Order: first.Order}}))
	b.send(async)
	b.wait(scenarios.Wait{Hold: first.Order, OrAnswered: first.ID})
	answered := scenarios.Wait{Responses: []string{first.ID}}
	switch cp.Choreography {
	case crashwave.KillInHold:
		b.add(at(scenarios.Step{Kill: &r}))
		b.add(scenarios.Step{Release: first.Order})
		b.wait(answered)
		b.add(scenarios.Step{Restart: &r})
	case crashwave.StoreRestartInHold:
		id := "store_" + first.Order
		b.add(at(scenarios.Step{Fault: &scenarios.Fault{ID: id, Kind: cp.Kind, Store: cp.Store}}))
		b.add(scenarios.Step{Release: first.Order})
		b.wait(answered)
		b.heal(id)
	case crashwave.PauseInHold:
		b.add(at(scenarios.Step{Pause: &r}))
		b.add(scenarios.Step{Release: first.Order})
		b.add(scenarios.Step{Resume: &r})
		b.wait(answered)
	case crashwave.ClientLinkInHold:
		id := "client_" + first.Order
		b.add(at(scenarios.Step{Fault: &scenarios.Fault{ID: id, Kind: cp.Kind, Link: fmt.Sprintf("client->replica%d", r)}}))
		b.wait(answered)
		b.add(scenarios.Step{Release: first.Order})
		b.heal(id)
	}
	b.heal(hang)
}
