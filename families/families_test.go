package families_test

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/crashwave"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// testTarget is a built-in-like target in test mode: a 1s TTL promising
// a 30× retry window.
func testTarget(t *testing.T, pol target.Policy) *target.Target {
	t.Helper()
	tg := &target.Target{Name: "t", Start: target.Start{Command: "./srv"}, Policy: pol}
	if err := tg.Validate(); err != nil {
		t.Fatal(err)
	}
	return tg
}

var wideWindow = target.Policy{TTL: time.Second, RetryWindow: 30 * time.Second, RecoveryWindow: 2 * time.Second, MaxWait: 2 * time.Second}

// draw plays fam's generator under rapid and hands every scenario to see.
func draw(t *testing.T, name string, tg *target.Target, see func(scenarios.Scenario)) {
	t.Helper()
	fam, err := families.FamilyByName(name)
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(rt *rapid.T) { see(fam.Gen(rt, tg, 2)) })
}

// retryTimes are the late-retry waits of a scenario before its probes,
// as durations (not the wait for the duplicates past the promise).
func retryTimes(sc scenarios.Scenario, ttl time.Duration) []time.Duration {
	at, _ := lateWaits(sc, ttl)
	return at
}

// lateWaits are a late-retry scenario's waits before its probes, and the
// wait before its duplicates past the promise (0: none drawn).
func lateWaits(sc scenarios.Scenario, ttl time.Duration) (probes []time.Duration, past time.Duration) {
	for i, s := range sc.Steps {
		if s.Wait == nil || s.Wait.TTL == 0 {
			continue
		}
		d := time.Duration(s.Wait.TTL * float64(ttl))
		if next := nextSend(sc.Steps[i+1:]); next != nil && next.Purpose == families.PurposePastPromise {
			past = d
			continue
		}
		probes = append(probes, d)
	}
	return probes, past
}

// nextSend is the first send among steps, nil for none.
func nextSend(steps []scenarios.Step) *scenarios.Send {
	for _, s := range steps {
		if s.Send != nil {
			return s.Send
		}
	}
	return nil
}

// TestLateRetry_DuplicatesPastThePromise: some examples send two or three
// duplicates together past the promise, clear of the band around its end,
// after every probe and within the family's example time; none where no
// probe passes the TTL.
func TestLateRetry_DuplicatesPastThePromise(t *testing.T) {
	for _, pol := range []target.Policy{wideWindow, {TTL: 2 * time.Second}} {
		tg := testTarget(t, pol)
		fam, _ := families.FamilyByName("late-retry")
		seen := 0
		draw(t, "late-retry", tg, func(sc scenarios.Scenario) {
			probes, past := lateWaits(sc, pol.TTL)
			if past == 0 {
				return
			}
			seen++
			n, slow := 0, false
			for _, s := range sc.Steps {
				switch {
				case s.Fault != nil && s.Fault.Kind == "gateway:slow":
					slow = true
				case s.Heal != "":
					slow = false
				case s.Send != nil && s.Send.Purpose == families.PurposePastPromise:
					n++
					if !s.Send.Async || !slow {
						t.Fatalf("duplicate %s past the promise is not sent together with the others, the gateway slow for them", s.Send.ID)
					}
				}
			}
			if slow {
				t.Fatal("the gateway is left slow after the duplicates past the promise")
			}
			switch p := tg.Policy; {
			case n < 2 || n > 3:
				t.Fatalf("%d duplicates past the promise, want 2 or 3", n)
			case past < p.Promise()+p.Band():
				t.Fatalf("duplicates past the promise at %s, inside the band %s±%s", past, p.Promise(), p.Band())
			case len(probes) > 0 && past <= probes[len(probes)-1]:
				t.Fatalf("duplicates past the promise at %s before the last probe %s", past, probes[len(probes)-1])
			case past > fam.ExampleTime(tg):
				t.Fatalf("duplicates past the promise at %s, past the family's example time %s", past, fam.ExampleTime(tg))
			}
		})
		if pol.RetryWindow > pol.TTL && seen == 0 {
			t.Error("no example sent duplicates past the promise")
		}
		if pol.RetryWindow <= pol.TTL && seen > 0 {
			t.Errorf("%d examples sent duplicates past a promise no probe passes the TTL of", seen)
		}
	}
}

// TestLateRetry_ProbesSpreadAcrossRetryWindow: probes reach across the
// whole retry window, up to just inside its end, so a server keeping keys
// for 3× its TTL while promising 30× is probed past 3×.
func TestLateRetry_ProbesSpreadAcrossRetryWindow(t *testing.T) {
	tg := testTarget(t, wideWindow)
	pol := tg.Policy
	band := pol.Band()
	var latest time.Duration
	pastThreeTTL, between := 0, 0
	draw(t, "late-retry", tg, func(sc scenarios.Scenario) {
		at := retryTimes(sc, pol.TTL)
		for i, d := range at {
			if i > 0 && d < at[i-1] {
				t.Fatalf("probes out of order: %v", at)
			}
			for _, edge := range []time.Duration{pol.TTL, pol.RetryWindow} {
				if d > edge-band && d < edge+band {
					t.Fatalf("probe at %s inside the UNKNOWN band %s±%s: %v", d, edge, band, at)
				}
			}
			if d > pol.RetryWindow {
				t.Fatalf("probe at %s past the promised window %s", d, pol.RetryWindow)
			}
			if d > 3*pol.TTL {
				pastThreeTTL++
			}
			if d > 3*pol.TTL && d < pol.RetryWindow-2*band {
				between++
			}
			latest = max(latest, d)
		}
	})
	if latest < pol.RetryWindow-2*band {
		t.Errorf("latest probe %s: the end of the %s window is never probed", latest, pol.RetryWindow)
	}
	if pastThreeTTL == 0 || between == 0 {
		t.Errorf("probes past 3×TTL: %d, strictly inside (3×TTL, window end): %d; want both", pastThreeTTL, between)
	}
	fam, _ := families.FamilyByName("late-retry")
	if got := fam.ExampleTime(tg); got < latest {
		t.Errorf("late-retry declares %s per example, but probes wait up to %s", got, latest)
	}
}

// TestLateRetry_LastProbeRetriedClearOfTheEdge: the key's last probe,
// and no other send, re-sends an indeterminate answer (RetryWithin), up
// to a bound after the probe and clear of the UNKNOWN band around the
// TTL or the promise's end, whichever the probe is inside of.
func TestLateRetry_LastProbeRetriedClearOfTheEdge(t *testing.T) {
	for _, pol := range []target.Policy{wideWindow, {TTL: 2 * time.Second}} {
		tg := testTarget(t, pol)
		pol := tg.Policy
		draw(t, "late-retry", tg, func(sc scenarios.Scenario) {
			at := retryTimes(sc, pol.TTL)
			var within []scenarios.Send
			for _, s := range sc.Steps {
				if s.Send != nil && s.Send.RetryWithin > 0 {
					within = append(within, *s.Send)
				}
			}
			if len(at) == 0 {
				return
			}
			if len(within) != 1 || within[0].ID != fmt.Sprintf("retry%d", len(at)-1) {
				t.Fatalf("sends retried within a bound %v, want the last probe's only (probes at %v)", within, at)
			}
			last, by := at[len(at)-1], time.Duration(within[0].RetryWithin*float64(pol.TTL))
			edge := pol.Promise()
			if last < pol.TTL {
				edge = pol.TTL
			}
			if by <= last || by > edge-pol.Band() {
				t.Fatalf("last probe at %s retried until %s: want after it and clear of the band %s±%s", last, by, edge, pol.Band())
			}
		})
	}
}

// A target promising no more than its TTL gets only an early probe, clear
// of the band.
func TestLateRetry_NoLateProbeWithoutWindow(t *testing.T) {
	tg := testTarget(t, target.Policy{TTL: 2 * time.Second})
	draw(t, "late-retry", tg, func(sc scenarios.Scenario) {
		for _, d := range retryTimes(sc, tg.Policy.TTL) {
			if d > tg.Policy.TTL-tg.Policy.Band() {
				t.Fatalf("probe at %s with a window equal to the TTL %s", d, tg.Policy.TTL)
			}
		}
	})
}

// TestProtocol_OnePaymentOneKeyForm: a payment's requests use one key form.
func TestProtocol_OnePaymentOneKeyForm(t *testing.T) {
	tg := testTarget(t, wideWindow)
	quoted := 0
	draw(t, "protocol", tg, func(sc scenarios.Scenario) {
		forms := map[string]string{}
		for _, s := range sc.Steps {
			if s.Send == nil {
				continue
			}
			if f, seen := forms[s.Send.Key]; seen && f != s.Send.KeyForm {
				t.Fatalf("key %s sent as %q and %q: %v", s.Send.Key, f, s.Send.KeyForm, sc.Steps)
			}
			forms[s.Send.Key] = s.Send.KeyForm
			if s.Send.KeyForm == "quoted" && s.Send.Purpose == "sequential-retry" {
				quoted++
			}
		}
	})
	if quoted == 0 {
		t.Error("the quoted form is never retried on its own key")
	}
}

// TestConcurrent_LatencyBeyondMaxWait: latencies across the whole range
// up to and beyond max_wait.
func TestConcurrent_LatencyBeyondMaxWait(t *testing.T) {
	tg := testTarget(t, wideWindow)
	short, long := 0, 0
	draw(t, "concurrent-duplicates", tg, func(sc scenarios.Scenario) {
		for _, s := range sc.Steps {
			if s.Fault == nil || s.Fault.Kind != "gateway:slow" {
				continue
			}
			d, err := time.ParseDuration(s.Fault.Params["latency"])
			if err != nil {
				t.Fatal(err)
			}
			if d > families.MaxGatewayLatency(tg) {
				t.Fatalf("latency %s beyond the documented maximum %s", d, families.MaxGatewayLatency(tg))
			}
			if d < tg.Policy.MaxWait/2 {
				short++
			}
			if d > tg.Policy.MaxWait {
				long++
			}
		}
	})
	if short == 0 || long == 0 {
		t.Errorf("latencies below max_wait/2: %d, beyond max_wait: %d; want both", short, long)
	}
}

// TestFamilies_DrawDeclines: generators draw declines: a first answer that is a
// decline, retries after it, concurrent duplicates of a declined payment
// and a mutated body after a decline.
func TestFamilies_DrawDeclines(t *testing.T) {
	tg := testTarget(t, wideWindow)
	cases := map[string]func(sc scenarios.Scenario, declined map[string]bool) bool{
		"concurrent-duplicates": func(sc scenarios.Scenario, declined map[string]bool) bool {
			n, after := 0, false
			for _, s := range sc.Steps {
				if s.Send != nil && s.Send.Async && declined[s.Send.Order] {
					n++
				}
				after = after || s.Send != nil && s.Send.Purpose == "retry-after-completion" && declined[s.Send.Order]
			}
			return n >= 2 && after
		},
		"key-reuse": func(sc scenarios.Scenario, declined map[string]bool) bool {
			for _, s := range sc.Steps {
				if s.Send != nil && declined["o0"] && strings.HasPrefix(s.Send.Purpose, "different:") {
					return true
				}
			}
			return false
		},
		"late-retry": func(sc scenarios.Scenario, declined map[string]bool) bool {
			return declined["o0"] && sc.Requests() >= 2
		},
	}
	// The decline is healed once the first answer is in: a retry that the
	// server does not answer from its stored decline is charged.
	healedBeforeRetry := func(sc scenarios.Scenario) bool {
		healed := false
		for _, s := range sc.Steps {
			healed = healed || s.Heal == "decline_o0"
			if s.Send != nil && s.Send.ID != "first" && s.Send.Order == "o0" {
				return healed
			}
		}
		return true
	}
	for name, shows := range cases {
		t.Run(name, func(t *testing.T) {
			hits := 0
			draw(t, name, tg, func(sc scenarios.Scenario) {
				declined := map[string]bool{}
				healed := map[string]bool{}
				for _, s := range sc.Steps {
					switch {
					case s.Fault != nil && s.Fault.Kind == "gateway:decline":
						if s.Fault.Order == "" {
							t.Fatalf("a decline fault without an order declines other examples' payments: %v", s)
						}
						declined[s.Fault.Order] = true
					case s.Send != nil && s.Send.Async && healed[s.Send.Order] && s.Send.Purpose != families.PurposePastPromise:
						t.Fatalf("duplicate %s sent after its payment's decline was healed: it is no longer the first answer", s.Send.ID)
					case s.Heal != "" && strings.HasPrefix(s.Heal, "decline_"):
						healed[strings.TrimPrefix(s.Heal, "decline_")] = true
					}
				}
				for o := range declined {
					if !healed[o] {
						t.Fatalf("decline of %s never healed", o)
					}
				}
				if name != "concurrent-duplicates" && declined["o0"] && !healedBeforeRetry(sc) {
					t.Fatalf("decline still armed when the first retry is sent: %v", sc.Steps)
				}
				if shows(sc, declined) {
					hits++
				}
			})
			if hits == 0 {
				t.Errorf("%s never draws the decline case", name)
			}
		})
	}
}

// TestCrashWindow_RefusedWhenNoStrikeFitsThePromise: a crash-window
// retry must land inside the promise; a target whose promise leaves no
// room for a single strike before it is refused for that family, with
// file:line and what to change, and only for it.
func TestCrashWindow_RefusedWhenNoStrikeFitsThePromise(t *testing.T) {
	tg, err := target.Parse("short.yaml", []byte("name: x\nstart: {command: ./s}\npolicy:\n  ttl: 1s\n  recovery_window: 30s\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = families.CheckFamilies(tg, families.MustSelect("concurrent-duplicates", "crash-window"))
	if err == nil || !errors.Is(err, target.ErrInvalid) {
		t.Fatalf("err = %v, want a refusal wrapping target.ErrInvalid", err)
	}
	for _, want := range []string{"short.yaml:5: policy.recovery_window:", "retry_window to at least"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to contain %q", err, want)
		}
	}
	if err := families.CheckFamilies(tg, families.MustSelect("concurrent-duplicates", "mixed")); err != nil {
		t.Errorf("a family that does not need the promise refused the target: %v", err)
	}
	mixed, _ := families.FamilyByName("mixed")
	rapid.Check(t, func(rt *rapid.T) {
		if sc := mixed.Gen(rt, tg, 2); sc.Name == "mixed/crash-window" {
			t.Fatal("mixed drew crash-window for a target it cannot fit")
		}
	})
}

func TestCrashWindow_ShippedTargetsFit(t *testing.T) {
	tg, err := target.Load("../examples/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := families.CheckFamilies(tg, families.Families); err != nil {
		t.Errorf("examples/reference.yaml: %v", err)
	}
}

// TestFamilies_RegisteredInRankOrder: each family registers itself from
// its own file; the table comes out in rank order whatever the order the
// files' inits ran in, and exactly one family is composite.
func TestFamilies_RegisteredInRankOrder(t *testing.T) {
	want := "concurrent-duplicates key-reuse crash-window late-retry tenants look-alike protocol mixed"
	if got := strings.Join(families.FamilyNames(), " "); got != want {
		t.Errorf("families %q, want %q", got, want)
	}
	var composite []string
	for _, f := range families.Families {
		if f.Composite {
			composite = append(composite, f.Name)
		}
	}
	if len(composite) != 1 || composite[0] != "mixed" {
		t.Errorf("composite families %v, want [mixed]", composite)
	}
}

// TestCrashWave_EveryPointStrikesWithItsKind: a wave with one payment per
// row of crashwave.Table strikes each point with the row's fault kind
// (a kill or pause step for a process kind), and every fault it injects
// builds.
func TestCrashWave_EveryPointStrikesWithItsKind(t *testing.T) {
	var pays []families.CrashPayment
	for _, cp := range crashwave.Table {
		pays = append(pays, families.CrashPayment{Point: cp.Name})
	}
	struck := map[string]string{}
	for _, s := range families.CrashWave(pays).Steps {
		switch {
		case s.Fault != nil:
			order := "" // aimed at the payment's order only when the fault names one, as the runner builds it
			if s.Fault.Order != "" {
				order = "ord"
			}
			if _, err := s.Fault.Spec(order).Build(); err != nil {
				t.Errorf("point %s: %v", s.Point, err)
			}
			if s.Fault.Kind != "gateway:charge_then_hang" {
				struck[s.Point] = s.Fault.Kind
			}
		case s.Kill != nil && s.Point != "":
			struck[s.Point] += "kill"
		case s.Pause != nil:
			struck[s.Point] = "pause"
		}
	}
	for _, cp := range crashwave.Table {
		if want := map[string]string{"kill_in_hang": "kill"}[cp.Kind]; struck[cp.Name] != cmp.Or(want, cp.Kind) {
			t.Errorf("point %s struck with %q, want %s", cp.Name, struck[cp.Name], cp.Kind)
		}
	}
}

// TestCrashWave_ClientLinkCutInsideTheHold: drop-client-in-hang takes
// the client's link to the payment's own replica down only once the
// gateway holds the charge, waits for the client's request to be cut
// before the charge is released, and heals the link after the release:
// the handler must finish for a client that is gone.
func TestCrashWave_ClientLinkCutInsideTheHold(t *testing.T) {
	steps := families.CrashWave([]families.CrashPayment{{Point: "drop-client-in-hang", Replica: 1}}).Steps
	at := map[string]int{}
	for i, s := range steps {
		switch {
		case s.Wait != nil && s.Wait.Hold != "":
			at["hold"] = i
		case s.Fault != nil && s.Fault.Link == "client->replica1" && s.Fault.Kind == "down" && s.Point == "drop-client-in-hang":
			at["down"] = i
		case s.Wait != nil && slices.Equal(s.Wait.Responses, []string{"first0"}):
			at["cut"] = i
		case s.Release != "":
			at["release"] = i
		case s.Heal != "" && at["down"] > 0 && steps[at["down"]].Fault.ID == s.Heal:
			at["heal"] = i
		}
	}
	order := []string{"hold", "down", "cut", "release", "heal"}
	for i := 1; i < len(order); i++ {
		if at[order[i-1]] == 0 || at[order[i-1]] >= at[order[i]] {
			t.Fatalf("steps %v: want %v in that order\n%v", at, order, steps)
		}
	}
}

// TestCrashWindow_StrikesOnlyTheStoresTheTargetHas: a target with keys in
// memory gets no store fault (no "no such link: replica0->postgres"); a
// target on Redis gets its link cut and Redis restarted, and nothing of
// PostgreSQL's.
func TestCrashWindow_StrikesOnlyTheStoresTheTargetHas(t *testing.T) {
	for _, tc := range []struct {
		needs []string
		want  []string // store faults every wave must hold
	}{
		{nil, nil},
		{[]string{"redis"}, []string{"down:redis", "store_restart:redis"}},
		{[]string{"postgres", "mysql"}, []string{"down:postgres", "down:mysql", "store_restart:postgres", "store_restart:mysql"}},
	} {
		tg := testTarget(t, wideWindow)
		tg.Needs = tc.needs
		draw(t, "crash-window", tg, func(sc scenarios.Scenario) {
			var got []string
			for _, s := range sc.Steps {
				f := s.Fault
				switch {
				case f == nil, strings.HasPrefix(f.Link, "client->"): // the client's link is no store's
				case f.Kind == "down":
					got = append(got, "down:"+f.Link[strings.Index(f.Link, "->")+2:])
				case f.Store != "":
					got = append(got, f.Kind+":"+f.Store)
				}
			}
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Fatalf("needs %v: wave without %s (store faults %v)", tc.needs, w, got)
				}
			}
			for _, g := range got {
				if !slices.Contains(tc.want, g) {
					t.Fatalf("needs %v: wave strikes %s", tc.needs, g)
				}
			}
		})
	}
}

// TestLateRetry_TimeFaultsByDefault: late-retry draws clock_skew and
// db_timezone by default, and neither when the run asks for none
// (target.Target.NoTimeFaults, certify --time-faults=false).
func TestLateRetry_TimeFaultsByDefault(t *testing.T) {
	for _, off := range []bool{false, true} {
		tg := testTarget(t, wideWindow)
		tg.Needs = []string{"postgres"}
		tg.NoTimeFaults = off
		kinds := map[string]int{}
		draw(t, "late-retry", tg, func(sc scenarios.Scenario) {
			for _, s := range sc.Steps {
				if s.Fault != nil && (s.Fault.Kind == "clock_skew" || s.Fault.Kind == "db_timezone") {
					kinds[s.Fault.Kind]++
				}
			}
		})
		if off && len(kinds) > 0 {
			t.Errorf("asked for none: time faults drawn %v", kinds)
		}
		if !off && (kinds["clock_skew"] == 0 || kinds["db_timezone"] == 0) {
			t.Errorf("by default: want both time faults drawn in 100 examples, got %v", kinds)
		}
	}
}

// TestLateRetry_TimeFaultsRarerInContainers: against containers, where a
// relaunch takes seconds, late-retry draws its time faults a quarter as
// often (far fewer examples in 1000 carry one).
func TestLateRetry_TimeFaultsRarerInContainers(t *testing.T) {
	count := func(containers bool) (n int) {
		tg := testTarget(t, wideWindow)
		tg.Needs = []string{"postgres"}
		tg.Containers = containers
		fam, err := families.FamilyByName("late-retry")
		if err != nil {
			t.Fatal(err)
		}
		gen := rapid.Custom(func(rt *rapid.T) scenarios.Scenario { return fam.Gen(rt, tg, 2) })
		for seed := range 1000 { // fixed seeds: the count is the same every run
			if slices.ContainsFunc(gen.Example(seed).Steps, func(s scenarios.Step) bool {
				return s.Fault != nil && (s.Fault.Kind == "clock_skew" || s.Fault.Kind == "db_timezone")
			}) {
				n++
			}
		}
		return n
	}
	processes, containers := count(false), count(true)
	t.Logf("examples with a time fault in 1000: %d against processes, %d against containers", processes, containers)
	if containers == 0 || containers > processes/3 {
		t.Errorf("examples with a time fault in 1000: %d against processes, %d against containers; want about a quarter as many against containers", processes, containers)
	}
}

// TestLateRetry_PartFitsTheRoomAndProbesPastTheTTL: a policy whose
// window does not fit (ttl 20s, retry window 60s, 48s of room) is played
// in part: every example fits the room, and its probes reach past the
// TTL (where a server that forgets keys at the TTL shows it); with room
// for no probe past the TTL only retries inside it are drawn; with room
// for not even that, nothing.
func TestLateRetry_PartFitsTheRoomAndProbesPastTheTTL(t *testing.T) {
	fam, err := families.FamilyByName("late-retry")
	if err != nil {
		t.Fatal(err)
	}
	tg := testTarget(t, target.Policy{TTL: 20 * time.Second, RetryWindow: time.Minute, RecoveryWindow: 5 * time.Second, MaxWait: time.Second})
	for _, c := range []struct {
		room             time.Duration
		ok, pastTheTTL   bool
		coversSubstrings string
	}{
		{48 * time.Second, true, true, "retries up to"},
		{22 * time.Second, true, false, "inside the TTL only"},
		{10 * time.Second, false, false, ""},
	} {
		part, covers, ok := fam.Part(tg, c.room)
		if ok != c.ok {
			t.Fatalf("room %s: ok %v, want %v", c.room, ok, c.ok)
		}
		if !ok {
			continue
		}
		if !strings.Contains(covers, c.coversSubstrings) {
			t.Errorf("room %s: covers %q, want %q", c.room, covers, c.coversSubstrings)
		}
		if need := fam.ExampleTime(part); need > c.room {
			t.Errorf("room %s: the part needs %s", c.room, need)
		}
		if tg.Policy.RetryWindow != time.Minute {
			t.Fatal("Part changed the target's own policy")
		}
		past := false
		draw(t, "late-retry", part, func(sc scenarios.Scenario) {
			for _, w := range retryTimes(sc, part.Policy.TTL) {
				past = past || w > part.Policy.TTL
			}
		})
		if past != c.pastTheTTL {
			t.Errorf("room %s: a probe past the TTL %v, want %v", c.room, past, c.pastTheTTL)
		}
	}
}

// TestLookAlike_PairsDifferOnlyByOrderAndKey: every example sends two
// orders from one tenant with one amount and currency, each under its own
// key.
func TestLookAlike_PairsDifferOnlyByOrderAndKey(t *testing.T) {
	tg := testTarget(t, wideWindow)
	draw(t, "look-alike", tg, func(sc scenarios.Scenario) {
		type pay struct {
			tenant   int
			amount   int64
			currency string
		}
		keys, seen := map[string]string{}, map[pay]bool{}
		for _, s := range sc.Steps {
			if s.Send == nil {
				continue
			}
			if k, ok := keys[s.Send.Order]; ok && k != s.Send.Key {
				t.Fatalf("order %s sent under keys %s and %s", s.Send.Order, k, s.Send.Key)
			}
			keys[s.Send.Order] = s.Send.Key
			seen[pay{s.Send.Tenant, s.Send.Amount, s.Send.Currency}] = true
		}
		if len(keys) != 2 || keys["oa"] == keys["ob"] || len(seen) != 1 {
			t.Fatalf("orders and keys %v, payments %v: want two orders under two keys that look alike", keys, seen)
		}
	})
}

// TestLookAlike_CaveatUnderAmountTrace: a target traced by amount is told
// that its pairs were not look-alike; one that names the order is not.
func TestLookAlike_CaveatUnderAmountTrace(t *testing.T) {
	fam, err := families.FamilyByName("look-alike")
	if err != nil {
		t.Fatal(err)
	}
	tg := testTarget(t, wideWindow)
	if c := fam.CaveatFor(tg); c != "" {
		t.Errorf("caveat %q for a target that names the order", c)
	}
	tg.Protocol.Trace = "amount"
	if err := tg.Validate(); err != nil {
		t.Fatal(err)
	}
	if c := fam.CaveatFor(tg); !strings.Contains(c, "not judged as look-alike") {
		t.Errorf("caveat %q under an amount trace: want it to say the pairs were not judged as look-alike", c)
	}
}

// TestCrashWindow_StrikesThePointsThatFit: a policy that leaves a wave
// room for some crash points only is played: no wave strikes a point
// whose one strike does not fit (restart-postgres, 1s, in 500ms of
// room), the waves between them strike every other point, and every
// payment's strike is bounded by the room (Before) and marked as its
// payment's (Strike), its sends too.
func TestCrashWindow_StrikesThePointsThatFit(t *testing.T) {
	pol := target.Policy{TTL: 20 * time.Second, RetryWindow: 20 * time.Second, RecoveryWindow: 16500 * time.Millisecond, MaxWait: time.Second}
	tg := testTarget(t, pol)
	tg.Needs = []string{"postgres"}
	if err := tg.CrashWindowFits(); err != nil {
		t.Fatal(err)
	}
	room := crashwave.Room(pol.WaveTerms())
	struck := map[string]int{}
	draw(t, "crash-window", tg, func(sc scenarios.Scenario) {
		pays := families.WavePayments(sc)
		if len(pays) == 0 {
			t.Fatal("a wave with no payment")
		}
		for _, pay := range pays {
			struck[pay.Point]++
			cp, _ := crashwave.Named(pay.Point)
			if pay.Within != 0 {
				t.Fatalf("payment at %s: final retry within %s, want after the recovery window", pay.Point, pay.Within)
			}
			if pay.By != max(room-cp.Cost, time.Nanosecond) {
				t.Fatalf("payment at %s: by %s, want the room %s less its cost %s", pay.Point, pay.By, room, cp.Cost)
			}
		}
		firsts := 0
		for _, s := range sc.Steps {
			if s.Before > 0 {
				firsts++
			}
			if s.Send != nil && strings.HasPrefix(s.Send.ID, "first") && s.Strike != s.Send.Order {
				t.Fatalf("first request %s marked %q, want its payment", s.Send.ID, s.Strike)
			}
		}
		if firsts != len(pays) {
			t.Fatalf("%d strikes bounded by the room, want every payment's (%d)", firsts, len(pays))
		}
	})
	if struck["restart-postgres"] > 0 {
		t.Errorf("restart-postgres struck %d times in 500ms of room", struck["restart-postgres"])
	}
	for _, cp := range crashwave.For(tg.StoreNames()) {
		if cp.Name != "restart-postgres" && struck[cp.Name] == 0 {
			t.Errorf("%s never struck, though its strike fits", cp.Name)
		}
	}
}

// TestCrashWindow_WholeWaveWhenItFits: under the built-ins' policy every
// point is struck in every wave, in the table's order, as before the room
// was measured.
func TestCrashWindow_WholeWaveWhenItFits(t *testing.T) {
	tg := testTarget(t, wideWindow)
	tg.Needs = []string{"postgres"}
	points := crashwave.For(tg.StoreNames())
	draw(t, "crash-window", tg, func(sc scenarios.Scenario) {
		var order []string
		for _, pay := range families.WavePayments(sc) {
			if len(order) == 0 || order[len(order)-1] != pay.Point {
				order = append(order, pay.Point)
			}
		}
		if len(order) != len(points) {
			t.Fatalf("struck %v, want every point in table order", order)
		}
		for i, cp := range points {
			if order[i] != cp.Name {
				t.Fatalf("struck %v, want every point in table order", order)
			}
		}
	})
}

// TestTenants_WithoutCredentialsOnlyWhereTaken: a target that takes
// requests without credentials gets examples whose two clients send none;
// one that does not never does.
func TestTenants_WithoutCredentialsOnlyWhereTaken(t *testing.T) {
	for _, anonymous := range []bool{false, true} {
		tg := testTarget(t, wideWindow)
		tg.Protocol.Anonymous = anonymous
		seen := 0
		draw(t, "tenants", tg, func(sc scenarios.Scenario) {
			without := 0
			for _, s := range sc.Steps {
				if s.Send != nil && s.Send.Tenant < 0 {
					without++
				}
			}
			sends := sc.Requests()
			switch {
			case !anonymous && without > 0:
				t.Fatalf("%d sends without credentials to a target that does not take them", without)
			case without > 0 && without != sends:
				t.Fatalf("%d of the sends without credentials: want every send of the example", without)
			case without > 0:
				seen++
			}
		})
		if anonymous && seen == 0 {
			t.Error("no example sent without credentials to a target that takes them")
		}
	}
}

// TestTenants_OneOrganisationWhereDeclared: a target that declares
// principals sharing an organisation gets examples whose shared key is
// sent by two of them, always two different tenants; one that declares
// none draws as before.
func TestTenants_OneOrganisationWhereDeclared(t *testing.T) {
	for _, declared := range []bool{false, true} {
		tg := testTarget(t, wideWindow)
		tg.Tenants = []string{"acme.a", "globex.a", "globex.b", "initech.a", "acme.b"}
		if declared {
			tg.Organisations = map[string][]string{"acme": {"acme.a", "acme.b"}}
		}
		if err := tg.Validate(); err != nil {
			t.Fatal(err)
		}
		seen := 0
		draw(t, "tenants", tg, func(sc scenarios.Scenario) {
			var a, b int
			for _, s := range sc.Steps {
				switch {
				case s.Send == nil:
				case s.Send.ID == "a":
					a = s.Send.Tenant
				case s.Send.ID == "b":
					b = s.Send.Tenant
				}
			}
			if a == b {
				t.Fatalf("the shared key sent by one tenant (%d) twice: want two", a)
			}
			if a+b == 4 && a*b == 0 {
				seen++
			}
		})
		t.Logf("declared %v: %d examples of 100 from acme's two principals", declared, seen)
		// By chance one pair in ten is acme's two; declared, one in three.
		if declared && seen < 15 {
			t.Errorf("%d examples of 100 sent the shared key from two principals of one organisation: want one in three", seen)
		}
	}
}

// TestProtocol_RefusedCredentialsBeforeRetries: some examples send the
// payment without credentials before its retries under the same key,
// never to a target that takes requests without credentials.
func TestProtocol_RefusedCredentialsBeforeRetries(t *testing.T) {
	for _, anonymous := range []bool{false, true} {
		tg := testTarget(t, wideWindow)
		tg.Protocol.Anonymous = anonymous
		seen := 0
		draw(t, "protocol", tg, func(sc scenarios.Scenario) {
			refused := -1
			for i, s := range sc.Steps {
				switch {
				case s.Send == nil:
				case s.Send.Tenant < 0 && anonymous:
					t.Fatalf("%s sent without credentials to a target that takes them", s.Send)
				case s.Send.Tenant < 0:
					refused = i
					seen++
				case refused >= 0 && s.Send.Key != sc.Steps[refused].Send.Key:
					t.Fatalf("%s after the refused request: want its key %s", s.Send, sc.Steps[refused].Send.Key)
				}
			}
			if refused >= 0 && refused == len(sc.Steps)-1 {
				t.Fatalf("the refused request is not followed by its retries")
			}
		})
		if !anonymous && seen == 0 {
			t.Error("no example sent the payment without credentials first")
		}
	}
}

// TestCrashWindow_RetriesInsideThePromiseWhenRecoveryDoesNotFit: a
// recovery window as long as the promise (ttl, retry_window and
// recovery_window 10s) leaves no room for it before the final retries,
// and the waves are played all the same: every point struck, the recovery
// wait ended inside the promise (Within: the promise less its band and
// the margin), so that M1, M3 and M4 judge every payment.
func TestCrashWindow_RetriesInsideThePromiseWhenRecoveryDoesNotFit(t *testing.T) {
	pol := target.Policy{TTL: 10 * time.Second, RetryWindow: 10 * time.Second, RecoveryWindow: 10 * time.Second, MaxWait: time.Second}
	tg := testTarget(t, pol)
	tg.Needs = []string{"postgres"}
	if err := tg.CrashWindowFits(); err != nil {
		t.Fatal(err)
	}
	within := pol.Promise() - pol.Band() - crashwave.Margin
	draw(t, "crash-window", tg, func(sc scenarios.Scenario) {
		points := map[string]bool{}
		for _, pay := range families.WavePayments(sc) {
			points[pay.Point] = true
		}
		if len(points) != len(crashwave.For(tg.StoreNames())) {
			t.Fatalf("struck %v, want every point", points)
		}
		waits := 0
		for _, s := range sc.Steps {
			if s.Wait != nil && s.Wait.Recovery {
				waits++
				if s.Wait.Within != within {
					t.Fatalf("recovery wait within %s, want %s", s.Wait.Within, within)
				}
			}
		}
		if waits != 1 {
			t.Fatalf("%d recovery waits, want 1", waits)
		}
	})
}

// TestCrashWave_PaymentsReadBack: a crash wave re-built from the payments
// read back from its steps is the wave drawn, under a policy where the
// whole wave fits, one that leaves a point out (strikes in a drawn
// order), and one with no room for the recovery window (Within), so that
// Solo re-builds exactly the payments it keeps.
func TestCrashWave_PaymentsReadBack(t *testing.T) {
	for _, pol := range []target.Policy{
		wideWindow,
		{TTL: 20 * time.Second, RetryWindow: 20 * time.Second, RecoveryWindow: 16500 * time.Millisecond, MaxWait: time.Second},
		{TTL: 10 * time.Second, RetryWindow: 10 * time.Second, RecoveryWindow: 10 * time.Second, MaxWait: time.Second},
	} {
		tg := testTarget(t, pol)
		tg.Needs = []string{"postgres"}
		draw(t, "crash-window", tg, func(sc scenarios.Scenario) {
			pays := families.WavePayments(sc)
			if again := families.CrashWave(pays); !reflect.DeepEqual(again.Steps, sc.Steps) {
				t.Fatalf("re-built from %+v:\n%v\nwant\n%v", pays, again.Steps, sc.Steps)
			}
			if len(pays) < 2 {
				return
			}
			last := fmt.Sprintf("o%d", len(pays)-1)
			solo, ok := families.Solo(sc, []string{last, "o99"})
			if want := families.CrashWave(pays[len(pays)-1:]); !ok || !reflect.DeepEqual(solo.Steps, want.Steps) || solo.Name != sc.Name {
				t.Fatalf("solo of %s: ok %v, %v, want the wave of its payment alone", last, ok, solo.Steps)
			}
		})
	}
}

// TestSolo_OnlyAPartOfAWave: the crash-window family's Solo hook keeps
// nothing apart when the orders name no payment or every one, or the
// scenario is no wave; mixed's hook is that of the family it drew from.
func TestSolo_OnlyAPartOfAWave(t *testing.T) {
	crash, mixed := families.MustSelect("crash-window")[0], families.MustSelect("mixed")[0]
	wave := families.CrashWave([]families.CrashPayment{{Point: "charge-then-fail"}, {Point: "kill-in-hang"}})
	for _, orders := range [][]string{nil, {"o7"}, {"o0", "o1"}} {
		if _, ok := crash.Solo(wave, orders); ok {
			t.Errorf("solo of %v kept a part of the wave", orders)
		}
	}
	if solo, ok := crash.Solo(wave, []string{"o1"}); !ok || len(families.WavePayments(solo)) != 1 || families.WavePayments(solo)[0].Point != "kill-in-hang" {
		t.Errorf("solo of o1: %v %+v, want kill-in-hang's payment", ok, families.WavePayments(solo))
	}
	draw(t, "key-reuse", testTarget(t, wideWindow), func(sc scenarios.Scenario) {
		if _, ok := crash.Solo(sc, []string{"o0"}); ok {
			t.Fatalf("a key-reuse scenario re-built as a wave")
		}
	})
	wave.Family, wave.Name = "mixed", "mixed/crash-window"
	if solo, ok := mixed.Solo(wave, []string{"o0"}); !ok || solo.Name != "mixed/crash-window" || len(families.WavePayments(solo)) != 1 {
		t.Errorf("mixed's solo of its crash wave: %v %q", ok, solo.Name)
	}
	wave.Name = "mixed/key-reuse"
	if _, ok := mixed.Solo(wave, []string{"o0"}); ok {
		t.Errorf("mixed's solo through a family without one")
	}
}
