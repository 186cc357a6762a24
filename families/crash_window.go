package families

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// waveStrikes is about how long a crash wave's strikes take before its
// recovery window: restarts after kills, held charges, faulted requests.
const waveStrikes = 8 * time.Second

// crash-window plays one wave at a time: a second wave in flight strikes
// during the first one's recovery window, which then counts from the
// second's heal (runner/live.go), and a server that never recovers would
// be found a wave later.
func init() {
	register(Family{Name: "crash-window", Level: "L4", Rank: 30, Gen: genCrash,
		Doc:     "a wave of payments struck at every crash point (kills, pauses, gateway faults, link faults), one recovery window, then retries inside the promise",
		MinTime: func(tg *target.Target) time.Duration { return tg.Policy.RecoveryWindow + waveStrikes },
		Fits:    (*target.Target).CrashWindowFits, Workers: 1,
		Limit: func(tg *target.Target) string { return "policy.recovery_window = " + tg.Policy.RecoveryWindow.String() }})
}

// genCrash draws a crash wave: every one of checker.CrashPoints strikes
// 1-3 payments of its own, so that a single example (one recovery window)
// covers every point, whatever the seed. Each payment's first request
// meets its point's fault; then some payments retry during recovery, the
// wave waits out the recovery window once, and every payment retries
// inside its promise. The checker partitions by key and order, so every
// payment is judged on its own; a failing wave is shrunk by rapid (fewer
// payments per point) and then re-played with only the payments that
// failed (Solo).
func genCrash(t *rapid.T, tg *target.Target, replicas int) scenarios.Scenario {
	var pays []scenarios.CrashPayment
	room := waveRoom(tg.Policy)
	for _, point := range checker.CrashPoints {
		n := 1
		if !restarts(point) {
			n = rapid.IntRange(1, 3).Draw(t, "payments_"+point)
		}
		for i := range n {
			if i > 0 && room < strikeCost(point) {
				break // the wave's first payment must be retried inside its promise
			}
			room -= strikeCost(point)
			pays = append(pays, scenarios.CrashPayment{Point: point,
				Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica"),
				Tenant:  rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant"),
				Amount:  drawAmount(t),
				Early:   rapid.IntRange(0, 1).Draw(t, "early_retries"),
				Final:   rapid.IntRange(0, replicas-1).Draw(t, "final_replica")})
		}
	}
	return CrashWave(pays)
}

// waveRoom is how long a wave's strikes may take: every payment's final
// retry comes after all strikes and one recovery window, and must land
// inside its promise, clear of the boundary band, with half the room kept
// for a loaded machine.
func waveRoom(p target.Policy) time.Duration {
	return (p.Promise() - p.RecoveryWindow - p.Band()) / 2
}

// restarts says a point kills or freezes a replica: its one payment per
// wave costs a restart, seconds for a container, so a wave strikes it
// once (measured: with up to three kills per point, container-mode waves
// sent final retries past a 20s promise).
func restarts(point string) bool {
	return point == "kill-in-hang" || point == "kill-after-response" || point == "pause-in-hang"
}

// strikeCost is about how long striking one payment at point takes
// (measured against the reference on 2 cores: a kill and restart ~0.5s,
// a held charge ~0.2s, a gateway or link fault ~0.1s).
func strikeCost(point string) time.Duration {
	switch point {
	case "kill-in-hang", "kill-after-response":
		return 500 * time.Millisecond
	case "pause-in-hang":
		return 200 * time.Millisecond
	}
	return 100 * time.Millisecond
}

// CrashWave is the crash-window scenario of the given payments; payment i
// has key k<i> and order o<i>. The scenario keeps the payments (Wave), so
// that Solo can re-build it with fewer.
func CrashWave(pays []scenarios.CrashPayment) scenarios.Scenario {
	var b builder
	for i, pay := range pays {
		first := scenarios.Send{ID: fmt.Sprintf("first%d", i), Client: i, Replica: pay.Replica, Tenant: pay.Tenant,
			Key: fmt.Sprintf("k%d", i), Order: fmt.Sprintf("o%d", i), Amount: pay.Amount, Purpose: "crash:" + pay.Point}
		strike(&b, pay.Point, pay.Replica, first)
	}
	for i, pay := range pays {
		for e := range pay.Early {
			b.send(scenarios.Send{ID: fmt.Sprintf("early%d_%d", i, e), Client: i, Replica: pay.Final, Tenant: pay.Tenant, Key: fmt.Sprintf("k%d", i), Order: fmt.Sprintf("o%d", i), Amount: pay.Amount, Purpose: "retry-during-recovery", Async: true})
		}
	}
	b.waitAll()
	b.wait(scenarios.Wait{Recovery: true})
	for i, pay := range pays {
		b.send(scenarios.Send{ID: fmt.Sprintf("final%d", i), Client: i, Replica: pay.Final, Tenant: pay.Tenant, Key: fmt.Sprintf("k%d", i), Order: fmt.Sprintf("o%d", i), Amount: pay.Amount, Purpose: "retry-after-recovery", Async: true, Converge: true})
	}
	b.waitAll()
	sc := b.scenario("crash-window")
	sc.Wave = pays
	return sc
}

// Solo re-builds a crash wave with only the payments of the given
// symbolic orders ("o3"), to re-play a failing payment alone; ok is false
// for a scenario that is not a wave or names none of them.
func Solo(sc scenarios.Scenario, orders []string) (scenarios.Scenario, bool) {
	var keep []scenarios.CrashPayment
	for i, pay := range sc.Wave {
		if slices.Contains(orders, fmt.Sprintf("o%d", i)) {
			keep = append(keep, pay)
		}
	}
	if len(keep) == 0 {
		return scenarios.Scenario{}, false
	}
	solo := CrashWave(keep)
	solo.Name, solo.Seed = sc.Name, sc.Seed
	return solo, true
}

// strike plays a payment's first request with its crash point's fault
// around it; every fault is healed and every replica back before strike
// returns. Every fault and process step carries the point and payment.
func strike(b *builder, point string, replica int, first scenarios.Send) {
	r := replica
	at := func(s scenarios.Step) scenarios.Step { s.Point, s.Payment = point, first.Order; return s }
	link := fmt.Sprintf("replica%d->gateway", r)
	async := first
	async.Async = true
	switch point {
	case "kill-in-hang", "pause-in-hang":
		hang := "hang_" + first.Order
		b.add(at(scenarios.Step{Fault: &scenarios.Fault{ID: hang, Kind: "gateway:charge_then_hang", Order: first.Order}}))
		b.send(async)
		b.wait(scenarios.Wait{Hold: first.Order})
		if point == "kill-in-hang" {
			b.add(at(scenarios.Step{Kill: &r}))
			b.add(scenarios.Step{Release: first.Order})
			b.wait(scenarios.Wait{Responses: []string{first.ID}})
			b.add(scenarios.Step{Restart: &r})
		} else {
			b.add(at(scenarios.Step{Pause: &r}))
			b.add(scenarios.Step{Release: first.Order})
			b.add(scenarios.Step{Resume: &r})
			b.wait(scenarios.Wait{Responses: []string{first.ID}})
		}
		b.heal(hang)
	case "fail-before-charge", "charge-then-fail", "charge-then-drop":
		id := "gw_" + first.Order
		b.add(at(scenarios.Step{Fault: &scenarios.Fault{ID: id, Kind: "gateway:" + strings.ReplaceAll(point, "-", "_"), Order: first.Order, Params: map[string]string{"times": "1"}}}))
		b.send(first)
		b.heal(id)
	case "reset-gateway-link", "timeout-gateway-link":
		id := "net_" + first.Order
		kind := map[string]string{"reset-gateway-link": "reset_peer", "timeout-gateway-link": "timeout"}[point]
		b.add(at(scenarios.Step{Fault: &scenarios.Fault{ID: id, Kind: kind, Link: link, Direction: "downstream", Params: map[string]string{"timeout": "100ms"}}}))
		b.send(first)
		b.heal(id)
	case "down-postgres-link":
		id := "db_" + first.Order
		b.add(at(scenarios.Step{Fault: &scenarios.Fault{ID: id, Kind: "down", Link: fmt.Sprintf("replica%d->postgres", r)}}))
		b.send(first)
		b.heal(id)
	case "kill-after-response":
		b.send(first)
		b.add(at(scenarios.Step{Kill: &r}))
		b.add(scenarios.Step{Restart: &r})
	}
}
