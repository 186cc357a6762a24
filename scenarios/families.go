package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/target"
)

// Family is a named generator of scenarios: a property-based test family.
type Family struct {
	Name  string
	Level string // the certification level it exercises (DESIGN.md §5)
	Doc   string
	// Gen draws one scenario. Every Draw is labelled, so a shrunk
	// counterexample reads as the choices that matter.
	Gen func(t *rapid.T, tg *target.Target, replicas int) Scenario
	// MinTime is the wall time one example needs at least for a target
	// (it waits out TTLs or recovery windows); nil means "short".
	MinTime func(tg *target.Target) time.Duration
	// Fits, when set, refuses a target whose policy the family cannot
	// probe meaningfully (a *yamlfile.FieldError naming the field and what
	// to change; see CheckFamilies). Nil means every valid target fits.
	Fits func(tg *target.Target) error
	// Waits says the family's examples spend most of their time waiting
	// (TTLs): it gets more examples in flight than the others, since a
	// waiting example costs nothing.
	Waits bool
	// Workers caps the family's examples in flight (0: no cap of its own).
	Workers int
	// Limit names the policy value that sets how long one example takes,
	// for the advice given when a family cannot fit its budget.
	Limit func(tg *target.Target) string
}

// LimitOf names what limits one example of f against tg.
func (f Family) LimitOf(tg *target.Target) string {
	if f.Limit == nil {
		return "the family's own requests"
	}
	return f.Limit(tg)
}

// ExampleTime is how long one example of f needs at least against tg.
func (f Family) ExampleTime(tg *target.Target) time.Duration {
	if f.MinTime == nil {
		return 0
	}
	return f.MinTime(tg)
}

// waveStrikes is the wall time a crash wave's strikes are budgeted before
// its recovery window when planning (MinTime), in either mode: a restart
// takes seconds in a container. It plans budgets only; what a promise must
// leave room for is history.LongestWave (target.CrashWindowFits).
const waveStrikes = 8 * time.Second

// longExample is the longest single example mixed will draw: a target
// whose TTL or recovery window is longer is certified for those levels by
// the dedicated families, with a budget that fits.
const longExample = 30 * time.Second

// Families is the table of property-based families, in level order.
// "mixed" is appended by init: it draws from all the others.
var Families = []Family{
	{Name: "concurrent-duplicates", Level: "L2", Doc: "duplicates in flight together, across replicas, with gateway latency up to and beyond max_wait; some payments declined", Gen: genConcurrent},
	{Name: "key-reuse", Level: "L3", Doc: "same key with a different body (each field) and with semantically equal bodies, after a charge or a decline", Gen: genKeyReuse},
	// crash-window plays one wave at a time: a second wave in flight
	// strikes during the first one's recovery window, which then counts
	// from the second's heal (scenarios/shared.go) and a server that
	// never recovers is found a wave later.
	{Name: "crash-window", Level: "L4", Doc: "a wave of payments struck at every crash point (kills, pauses, gateway faults, link faults), one recovery window, then retries inside the promise", Gen: genCrash,
		MinTime: func(tg *target.Target) time.Duration { return tg.Policy.RecoveryWindow + waveStrikes }, Fits: (*target.Target).CrashWindowFits,
		Workers: 1, Limit: func(tg *target.Target) string { return "policy.recovery_window = " + tg.Policy.RecoveryWindow.String() }},
	{Name: "late-retry", Level: "L5", Doc: "retries inside the TTL and spread across (TTL, retry window], up to just inside its end; some payments declined", Gen: genLateRetry,
		MinTime: lateRetryTime, Waits: true, Limit: func(tg *target.Target) string {
			return "policy.ttl = " + tg.Policy.TTL.String() + ", policy.retry_window = " + tg.Policy.RetryWindow.String()
		}},
	{Name: "tenants", Level: "L1", Doc: "one key used by two tenants", Gen: genTenants},
	{Name: "protocol", Level: "L1", Doc: "missing, empty, over-long, quoted and malformed keys; sequential retries", Gen: genProtocol},
}

// The mixed family draws from the others, so it joins the table last.
func init() {
	Families = append(Families, Family{Name: "mixed", Level: "L5", Doc: "all families at once: the nightly soak", Gen: genMixed})
}

// FamilyByName finds a family.
func FamilyByName(name string) (Family, error) {
	for _, f := range Families {
		if f.Name == name {
			return f, nil
		}
	}
	return Family{}, fmt.Errorf("unknown family %q: expected one of %s", name, strings.Join(FamilyNames(), ", "))
}

// FamilyNames lists the families' names in table order.
func FamilyNames() []string {
	var names []string
	for _, f := range Families {
		names = append(names, f.Name)
	}
	return names
}

// builder accumulates steps with small helpers, so generators read as
// timelines.
type builder struct{ steps []Step }

func (b *builder) add(s Step)     { b.steps = append(b.steps, s) }
func (b *builder) send(s Send)    { b.add(Step{Send: &s}) }
func (b *builder) wait(w Wait)    { b.add(Step{Wait: &w}) }
func (b *builder) fault(f Fault)  { b.add(Step{Fault: &f}) }
func (b *builder) heal(id string) { b.add(Step{Heal: id}) }
func (b *builder) waitAll()       { b.wait(Wait{Responses: []string{"*"}}) }
func (b *builder) scenario(fam string) Scenario {
	return Scenario{Name: fam, Family: fam, Steps: b.steps}
}

func drawAmount(t *rapid.T) int64 { return int64(rapid.IntRange(50, 99999).Draw(t, "amount")) }

func genConcurrent(t *rapid.T, tg *target.Target, replicas int) Scenario {
	var b builder
	latency := drawLatency(t, tg.Policy.MaxWait)
	orders := rapid.IntRange(1, 3).Draw(t, "orders")
	var declined []string
	for o := 0; o < orders; o++ {
		order, key := fmt.Sprintf("o%d", o), fmt.Sprintf("k%d", o)
		// The gateway is slow for this example's orders only, so that
		// other examples run beside it untouched.
		b.fault(Fault{ID: "slow_" + order, Kind: "gateway:slow", Order: order, Params: map[string]string{"latency": latency.String()}})
		if drawDecline(t) {
			b.fault(declineFault(order))
			declined = append(declined, order)
		}
		tenant := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant")
		amount := drawAmount(t)
		dups := rapid.IntRange(2, 6).Draw(t, "duplicates")
		for d := 0; d < dups; d++ {
			replica := rapid.IntRange(0, replicas-1).Draw(t, "replica")
			b.send(Send{ID: fmt.Sprintf("%s_%d", order, d), Client: d, Replica: replica, Tenant: tenant, Key: key, Order: order, Amount: amount, Async: true, Purpose: "duplicate"})
		}
	}
	b.waitAll()
	for o := 0; o < orders; o++ {
		b.heal(fmt.Sprintf("slow_o%d", o))
	}
	for _, order := range declined {
		b.heal("decline_" + order)
	}
	// A sequential retry after completion checks the stored answer (a
	// stored decline too, now that the gateway would charge); drawn, so
	// that shrinking can drop it when the duplicates alone fail.
	if rapid.Bool().Draw(t, "retry_after_completion") {
		for o := 0; o < orders; o++ {
			b.send(Send{ID: fmt.Sprintf("o%d_after", o), Client: 0, Replica: -1, Tenant: tenantOf(b.steps, fmt.Sprintf("o%d", o)), Key: fmt.Sprintf("k%d", o), Order: fmt.Sprintf("o%d", o), Amount: amountOf(b.steps, fmt.Sprintf("o%d", o)), Purpose: "retry-after-completion"})
		}
	}
	return b.scenario("concurrent-duplicates")
}

// drawLatency draws the gateway's latency for concurrent duplicates
// across the whole range a duplicate may be held, (0, max_wait], and
// beyond it: a server that gives up waiting early and charges itself is
// caught only when the owner's gateway call outlasts that wait (issue 11,
// item 15). Drawn in steps of a twentieth of max_wait, from 1/20 to
// 30/20, so shrinking moves toward the short latencies.
func drawLatency(t *rapid.T, maxWait time.Duration) time.Duration {
	twentieths := rapid.IntRange(1, latencySteps).Draw(t, "gateway_latency_twentieths_of_max_wait")
	return max(maxWait*time.Duration(twentieths)/20, time.Millisecond).Round(time.Millisecond)
}

// latencySteps makes drawLatency reach 1.5 × max_wait.
const latencySteps = 30

// MaxGatewayLatency is the longest gateway latency concurrent-duplicates
// draws for a target. A server's own gateway timeout must be longer:
// that family runs against a gateway with idempotency off, where a server
// that timed out and re-sent its request would be charged twice.
func MaxGatewayLatency(tg *target.Target) time.Duration {
	return tg.Policy.MaxWait * latencySteps / 20
}

// declineFault makes the gateway decline every charge for one order
// until healed: the decline is the first answer, and what retries,
// duplicates and reused keys of that payment must be given again. The
// generators heal it once the first answer is in, so that a server that
// forgot the decline (or never stored it) charges on a retry, and M4
// shows a decline on one try and a charge on another.
func declineFault(order string) Fault {
	return Fault{ID: "decline_" + order, Kind: "gateway:decline", Order: order}
}

// drawDecline says whether a payment's first answer is a decline: one in
// four, so that the families' other subjects keep most examples, and
// shrinking moves toward a charge.
func drawDecline(t *rapid.T) bool {
	return rapid.SampledFrom([]string{"charge", "charge", "charge", "decline"}).Draw(t, "first_answer") == "decline"
}

func tenantOf(steps []Step, order string) int {
	for _, s := range steps {
		if s.Send != nil && s.Send.Order == order {
			return s.Send.Tenant
		}
	}
	return 0
}

func amountOf(steps []Step, order string) int64 {
	for _, s := range steps {
		if s.Send != nil && s.Send.Order == order {
			return s.Send.Amount
		}
	}
	return 1250
}

// baseBody is the first body of key-reuse; mutations change one thing.
const baseBody = `{"amount":%d,"currency":"usd","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":2,"sku":"abc"}}}`

// Mutations of the base body: different requests (must be refused) and
// semantically equal ones (must be recognised). %d is the amount.
var mutations = map[string]string{
	"different:amount":   `{"amount":%d1,"currency":"usd","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":2,"sku":"abc"}}}`,
	"different:currency": `{"amount":%d,"currency":"USD","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":2,"sku":"abc"}}}`,
	"different:order":    `{"amount":%d,"currency":"usd","order_id":"{{order}}_b","description":"idemcheck","metadata":{"cart":{"items":2,"sku":"abc"}}}`,
	"different:metadata": `{"amount":%d,"currency":"usd","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":2,"sku":"abd"}}}`,
	"different:nested":   `{"amount":%d,"currency":"usd","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":3,"sku":"abc"}}}`,
	"equal:reordered":    `{"metadata":{"cart":{"sku":"abc","items":2}},"order_id":"{{order}}","description":"idemcheck","currency":"usd","amount":%d}`,
	"equal:whitespace":   "{ \"amount\" : %d ,\n  \"currency\":\"usd\", \"order_id\":\"{{order}}\",\t\"description\":\"idemcheck\", \"metadata\":{ \"cart\":{\"items\":2, \"sku\":\"abc\"} } }",
	"equal:exponent":     `{"amount":%d,"currency":"usd","order_id":"{{order}}","description":"idemcheck","metadata":{"cart":{"items":2e0,"sku":"abc"}}}`,
}

// MutationNames lists the mutations in a fixed order (map order is random,
// and a generator must be a function of its seed).
var MutationNames = []string{"different:amount", "different:currency", "different:order", "different:metadata", "different:nested", "equal:reordered", "equal:whitespace", "equal:exponent"}

func genKeyReuse(t *rapid.T, tg *target.Target, replicas int) Scenario {
	var b builder
	amount := drawAmount(t)
	tenant := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant")
	// A reused key after a decline must be refused or replayed like one
	// after a charge: the decline is the stored answer.
	if drawDecline(t) {
		b.fault(declineFault("o0"))
		b.send(Send{ID: "first", Replica: -1, Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Body: fmt.Sprintf(baseBody, amount), Purpose: "first"})
		b.heal("decline_o0")
	} else {
		b.send(Send{ID: "first", Replica: -1, Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Body: fmt.Sprintf(baseBody, amount), Purpose: "first"})
	}
	// One key and a list of reuses: keys are independent partitions, so
	// more keys add nothing a longer list does not, and a list is what
	// rapid shrinks best (it deletes elements).
	muts := rapid.SliceOfN(rapid.SampledFrom(MutationNames), 1, 5).Draw(t, "mutations")
	for m, mut := range muts {
		replica := rapid.IntRange(0, replicas-1).Draw(t, "replica")
		b.send(Send{ID: fmt.Sprintf("m%d", m), Client: m + 1, Replica: replica, Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Body: fmt.Sprintf(mutations[mut], amount), Purpose: mut})
	}
	return b.scenario("key-reuse")
}

// genCrash draws a crash wave: every point of history.CrashWave strikes
// 1 to MaxStrikes payments of its own (one when it restarts a replica),
// so that a single example (one recovery window) covers every point,
// whatever the seed. Each payment's first request
// meets its point's fault; then some payments retry during recovery, the
// wave waits out the recovery window once, and every payment retries
// inside its promise. The checker partitions by key and order, so every
// payment is judged on its own; a failing wave is shrunk by rapid (fewer
// payments per point) and then re-played with only the payments that
// failed (Solo).
func genCrash(t *rapid.T, tg *target.Target, replicas int) Scenario {
	var pays []CrashPayment
	room := waveRoom(tg.Policy)
	for _, cp := range history.CrashWave {
		n := 1
		if !cp.Restarts {
			n = rapid.IntRange(1, history.MaxStrikes).Draw(t, "payments_"+cp.Name)
		}
		for i := range n {
			if i > 0 && room < cp.Cost {
				break // the wave's first payment must be retried inside its promise
			}
			room -= cp.Cost
			pays = append(pays, CrashPayment{Point: cp.Name,
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

// CrashPayment is one payment of a crash wave: the point that strikes its
// first request, on which replica, and its retries.
type CrashPayment struct {
	Point   string
	Replica int
	Tenant  int
	Amount  int64
	Early   int // retries during recovery
	Final   int // replica of the retry after recovery
}

// CrashWave is the crash-window scenario of the given payments; payment i
// has key k<i> and order o<i>. The scenario keeps the payments (Wave), so
// that Solo can re-build it with fewer.
func CrashWave(pays []CrashPayment) Scenario {
	var b builder
	for i, pay := range pays {
		first := Send{ID: fmt.Sprintf("first%d", i), Client: i, Replica: pay.Replica, Tenant: pay.Tenant,
			Key: fmt.Sprintf("k%d", i), Order: fmt.Sprintf("o%d", i), Amount: pay.Amount, Purpose: "crash:" + pay.Point}
		strike(&b, pay.Point, pay.Replica, first)
	}
	for i, pay := range pays {
		for e := range pay.Early {
			b.send(Send{ID: fmt.Sprintf("early%d_%d", i, e), Client: i, Replica: pay.Final, Tenant: pay.Tenant, Key: fmt.Sprintf("k%d", i), Order: fmt.Sprintf("o%d", i), Amount: pay.Amount, Purpose: "retry-during-recovery", Async: true})
		}
	}
	b.waitAll()
	b.wait(Wait{Recovery: true})
	for i, pay := range pays {
		b.send(Send{ID: fmt.Sprintf("final%d", i), Client: i, Replica: pay.Final, Tenant: pay.Tenant, Key: fmt.Sprintf("k%d", i), Order: fmt.Sprintf("o%d", i), Amount: pay.Amount, Purpose: "retry-after-recovery", Async: true, Converge: true})
	}
	b.waitAll()
	sc := b.scenario("crash-window")
	sc.Wave = pays
	return sc
}

// Solo re-builds a crash wave with only the payments of the given
// symbolic orders ("o3"), to re-play a failing payment alone; ok is false
// for a scenario that is not a wave or names none of them.
func Solo(sc Scenario, orders []string) (Scenario, bool) {
	var keep []CrashPayment
	for i, pay := range sc.Wave {
		if slices.Contains(orders, fmt.Sprintf("o%d", i)) {
			keep = append(keep, pay)
		}
	}
	if len(keep) == 0 {
		return Scenario{}, false
	}
	solo := CrashWave(keep)
	solo.Name, solo.Seed = sc.Name, sc.Seed
	return solo, true
}

// strike plays a payment's first request with its crash point's fault
// around it; every fault is healed and every replica back before strike
// returns. Every fault and process step carries the point and payment.
// The point's fault kind (history.CrashWave) picks the choreography: a
// kill or a pause inside the gateway's hold of the charge, a kill after
// the answer, a link fault on the replica's gateway or database link, or
// (any other kind) a gateway rule for the payment's order, firing once.
func strike(b *builder, point string, replica int, first Send) {
	r := replica
	at := func(s Step) Step { s.Point, s.Payment = point, first.Order; return s }
	link := fmt.Sprintf("replica%d->gateway", r)
	async := first
	async.Async = true
	cp, _ := history.CrashPointNamed(point)
	switch cp.Kind {
	case "kill_in_hang", "pause":
		hang := "hang_" + first.Order
		b.add(at(Step{Fault: &Fault{ID: hang, Kind: "gateway:charge_then_hang", Order: first.Order}}))
		b.send(async)
		b.wait(Wait{Hold: first.Order})
		if cp.Kind == "kill_in_hang" {
			b.add(at(Step{Kill: &r}))
			b.add(Step{Release: first.Order})
			b.wait(Wait{Responses: []string{first.ID}})
			b.add(Step{Restart: &r})
		} else {
			b.add(at(Step{Pause: &r}))
			b.add(Step{Release: first.Order})
			b.add(Step{Resume: &r})
			b.wait(Wait{Responses: []string{first.ID}})
		}
		b.heal(hang)
	default:
		id := "gw_" + first.Order
		b.add(at(Step{Fault: &Fault{ID: id, Kind: cp.Kind, Order: first.Order, Params: map[string]string{"times": "1"}}}))
		b.send(first)
		b.heal(id)
	case "reset_peer", "timeout":
		id := "net_" + first.Order
		b.add(at(Step{Fault: &Fault{ID: id, Kind: cp.Kind, Link: link, Direction: "downstream", Params: map[string]string{"timeout": "100ms"}}}))
		b.send(first)
		b.heal(id)
	case "down":
		id := "db_" + first.Order
		b.add(at(Step{Fault: &Fault{ID: id, Kind: "down", Link: fmt.Sprintf("replica%d->postgres", r)}}))
		b.send(first)
		b.heal(id)
	case "kill":
		b.send(first)
		b.add(at(Step{Kill: &r}))
		b.add(Step{Restart: &r})
	}
}

func genLateRetry(t *rapid.T, tg *target.Target, replicas int) Scenario {
	var b builder
	tenant := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant")
	amount := drawAmount(t)
	first := Send{ID: "first", Replica: -1, Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Purpose: "first"}
	if drawDecline(t) {
		b.fault(declineFault("o0"))
		b.send(first)
		b.heal("decline_o0")
	} else {
		b.send(first)
	}
	for i, at := range drawProbes(t, tg.Policy) {
		b.wait(Wait{TTL: at})
		b.send(Send{ID: fmt.Sprintf("retry%d", i), Client: i + 1, Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica"), Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, Purpose: fmt.Sprintf("late-retry@%gxTTL", at)})
	}
	return b.scenario("late-retry")
}

func genTenants(t *rapid.T, tg *target.Target, replicas int) Scenario {
	var b builder
	a := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant_a")
	o := (a + 1 + rapid.IntRange(0, len(tg.Tenants)-2).Draw(t, "tenant_b_offset")) % len(tg.Tenants)
	concurrent := rapid.Bool().Draw(t, "concurrent")
	// Merchants whose keys collide often send alike bodies too (both number
	// orders from 1): then only tenant scoping keeps B from A's charge (M5).
	amountA := drawAmount(t)
	orderB, amountB := "ob", drawAmount(t)
	if rapid.Bool().Draw(t, "same_body") {
		orderB, amountB = "oa", amountA
	}
	b.send(Send{ID: "a", Client: 0, Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica_a"), Tenant: a, Key: "shared", Order: "oa", Amount: amountA, Async: concurrent, Purpose: "tenant-a"})
	b.send(Send{ID: "b", Client: 1, Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica_b"), Tenant: o, Key: "shared", Order: orderB, Amount: amountB, Async: concurrent, Purpose: "tenant-b"})
	b.waitAll()
	b.send(Send{ID: "a_retry", Client: 0, Replica: -1, Tenant: a, Key: "shared", Order: "oa", Amount: amountOf(b.steps, "oa"), Purpose: "retry"})
	return b.scenario("tenants")
}

func genProtocol(t *rapid.T, tg *target.Target, replicas int) Scenario {
	var b builder
	tenant := rapid.IntRange(0, len(tg.Tenants)-1).Draw(t, "tenant")
	amount := drawAmount(t)
	form := rapid.SampledFrom(KeyForms[1:]).Draw(t, "key_form")
	b.send(Send{ID: "odd", Replica: -1, Tenant: tenant, Key: "k0", Order: "o0", Amount: amount, KeyForm: form, Purpose: "key-form:" + form})
	// One payment, one key form: the quoted form is the same key to a
	// server that parses sf-strings and a different one to a server that
	// treats the header as opaque (as Stripe does); both are legitimate,
	// so a payment never mixes forms and the quoted one is graded on its
	// own keys, under R1 only (issue 11, item 7).
	form = rapid.SampledFrom([]string{"", "quoted"}).Draw(t, "payment_key_form")
	retries := rapid.IntRange(1, 3).Draw(t, "sequential_retries")
	for i := 0; i < retries; i++ {
		b.send(Send{ID: fmt.Sprintf("r%d", i), Client: 1, Replica: rapid.IntRange(0, replicas-1).Draw(t, "replica"), Tenant: tenant, Key: "k1", Order: "o1", Amount: amount, KeyForm: form, Purpose: "sequential-retry"})
	}
	return b.scenario("protocol")
}

func genMixed(t *rapid.T, tg *target.Target, replicas int) Scenario {
	var fams []Family
	for _, f := range Families[:len(Families)-1] { // all but mixed itself
		if f.ExampleTime(tg) <= longExample && (f.Fits == nil || f.Fits(tg) == nil) {
			fams = append(fams, f)
		}
	}
	fam := rapid.SampledFrom(fams).Draw(t, "family")
	sc := fam.Gen(t, tg, replicas)
	sc.Family = "mixed"
	sc.Name = "mixed/" + fam.Name
	return sc
}
