package scenarios

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/faults"
)

// Scenario is one deterministic timeline of client requests, faults and
// waits. Generators (rapid) build them, incident files are them written
// down, and the Runner plays them against an environment. Keys, orders
// and tenants in a scenario are symbolic: the runner gives every example
// fresh real identities, so one environment serves many examples.
type Scenario struct {
	Name        string `yaml:"name"`
	Family      string `yaml:"family"`
	Description string `yaml:"description,omitempty"`
	Seed        uint64 `yaml:"seed,omitempty"`
	// Source is the public thread that reported the incident, as
	// owner/repo#N (GitHub's number of an issue or a pull request);
	// required for the public catalogue (incidents/public/). Also lists
	// related threads in the same form.
	Source string   `yaml:"source,omitempty"`
	Also   []string `yaml:"also,omitempty"`
	// Class is the catalogue's class of the incident (Classes); empty
	// means the class of its Family (ClassOf).
	Class string `yaml:"class,omitempty"`
	// Target is the built-in target that exhibits the incident: Expect
	// holds for it. Against the reference every check must PASS.
	Target string   `yaml:"target,omitempty"`
	Steps  []Step   `yaml:"steps"`
	Expect []Expect `yaml:"expect,omitempty"`
	// origin is the file the scenario was loaded from, so that a check
	// made later (Member) still names file:line.
	origin *origin
}

type origin struct {
	name string
	data []byte
}

// Expect is a verdict an incident file promises for one check.
type Expect struct {
	Check   string `yaml:"check"`
	Verdict string `yaml:"verdict"`
}

// Step is one entry of the timeline; exactly one of its fields is set.
// Its String is the replayable one-line form shown in reports.
type Step struct {
	Send    *Send  `yaml:"send,omitempty"`
	Wait    *Wait  `yaml:"wait,omitempty"`
	Fault   *Fault `yaml:"fault,omitempty"`
	Heal    string `yaml:"heal,omitempty"`    // id of a fault to heal
	Kill    *int   `yaml:"kill,omitempty"`    // SIGKILL replica N
	Restart *int   `yaml:"restart,omitempty"` // start replica N again on its address
	Pause   *int   `yaml:"pause,omitempty"`   // SIGSTOP replica N
	Resume  *int   `yaml:"resume,omitempty"`  // SIGCONT replica N
	Release string `yaml:"release,omitempty"` // release the gateway's hold on this order
	// Point and Payment label the faults a fault, kill or pause step
	// injects: the crash point they strike (history.ParamCrashPoint) and
	// the symbolic order of the payment they strike (crash waves strike
	// many payments, each at one point).
	Point   string `yaml:"point,omitempty"`
	Payment string `yaml:"payment,omitempty"`
	// Strike names the crash-wave payment (its symbolic order) whose
	// strike this step belongs to. The runner leaves out the strike's
	// steps when the strike cannot happen: its first request was
	// answered before the gateway held its charge (Wait.OrAnswered), so
	// there is nothing to strike; and the whole payment, its sends too,
	// when its strike would begin later than Before after the example's
	// first request (set on the strike's first step), past the wave's
	// room (crashwave.Room) on a slow machine.
	Strike string        `yaml:"strike,omitempty"`
	Before time.Duration `yaml:"before,omitempty"`
}

// Send is one client request.
type Send struct {
	ID       string `yaml:"id,omitempty"` // name for waits; default "s<step index>"
	Client   int    `yaml:"client"`
	Replica  int    `yaml:"replica"`  // -1 = round robin
	Tenant   int    `yaml:"tenant"`   // index into the target's tenants; -1 = no Authorization
	Key      string `yaml:"key"`      // symbolic key
	Order    string `yaml:"order"`    // symbolic order
	Amount   int64  `yaml:"amount"`   // default 1250
	Currency string `yaml:"currency"` // default usd
	// KeyForm sends the key in another shape: "quoted" ("k" as an
	// sf-string), "empty", "long" (256 visible characters), "missing"
	// (no header), "bad-quoted" (an unterminated quoted string), "control".
	KeyForm string `yaml:"key_form,omitempty"`
	// Writing writes the target's body for this payment differently but
	// equally (one of target.Styles: reordered, rotated, whitespace,
	// exponent); Edit changes the static field of the body template that
	// this JSON pointer names (a different body, the payment's values
	// unchanged). See target.Writing.
	Writing string `yaml:"writing,omitempty"`
	Edit    string `yaml:"edit,omitempty"`
	// Body, when set, is sent verbatim after {{order}} is replaced by the
	// real order id: an incident's exact bytes, for the target it was
	// written for.
	Body    string `yaml:"body,omitempty"`
	Purpose string `yaml:"purpose,omitempty"`
	// Async sends without waiting for the answer; a later wait collects it.
	Async bool `yaml:"async,omitempty"`
	// Converge re-sends the request, as a client would, while its answer
	// is indeterminate (5xx, 409, 429, no answer), backing off (Retry-After
	// when given), for at most the target's recovery window plus
	// the policy's ConvergeSlack: convergence (M6) is judged on the last answer, not on
	// one shot at a replica still warming up.
	Converge bool `yaml:"converge,omitempty"`
	// RetryWithin re-sends the request while its answer is indeterminate,
	// backing off from 25ms (Retry-After when given), as long as each
	// re-send goes out within this many TTLs after the example's first
	// request: a request that must stay inside its key's promise and that
	// no later request of the example retries there (late-retry's last
	// probe: a 503 from a server still recovering from another example's
	// fault left convergence undecided for the whole key). Not with
	// Converge.
	RetryWithin float64 `yaml:"retry_within,omitempty"`
}

// Wait blocks the timeline until a condition holds (bounded by Timeout,
// default 30s). Exactly one condition is set.
type Wait struct {
	Responses []string      `yaml:"responses,omitempty"` // these async sends answered ("*" = all so far)
	Hold      string        `yaml:"hold,omitempty"`      // the gateway holds a committed charge for this order
	Charge    string        `yaml:"charge,omitempty"`    // the ledger has a charge for this order
	For       time.Duration `yaml:"for,omitempty"`       // plain time passing (late retries, leases)
	TTL       float64       `yaml:"ttl,omitempty"`       // this multiple of the target's TTL since the scenario began
	Recovery  bool          `yaml:"recovery,omitempty"`  // the target's recovery window
	Timeout   time.Duration `yaml:"timeout,omitempty"`
	// From, with TTL, counts the TTLs from the answer to this earlier send
	// (its id) instead: past a promise, where the checker counts the
	// key's age from that answer, the latest the server can have taken
	// the request.
	From string `yaml:"from,omitempty"`
	// OrAnswered ends a Hold wait when this async send answers first: the
	// server answered without charging (a 409, a refusal), so the gateway
	// never holds, and the strike waiting for the hold cannot happen. The
	// runner then leaves out the rest of that strike (Step.Strike) and
	// the payment is judged without it; without OrAnswered, a hold that
	// never comes is an error of the scenario.
	OrAnswered string `yaml:"or_answered,omitempty"`
	// Within ends a Recovery wait this long after the example's first
	// request at the latest, the window passed or not: a crash wave whose
	// policy leaves no room for the window before its final retries sends
	// them inside the promise all the same, and M6 judges what it can.
	Within time.Duration `yaml:"within,omitempty"`
}

// Fault injects a fault; Heal with its ID removes it.
type Fault struct {
	ID        string            `yaml:"id"`
	Kind      string            `yaml:"kind"`                // latency, timeout, reset_peer, down, slicer, limit_data, bandwidth, gateway:<kind>
	Link      string            `yaml:"link,omitempty"`      // client->replicaN, replicaN->gateway, replicaN->postgres|redis|mysql|store
	Store     string            `yaml:"store,omitempty"`     // store_restart, store_kill: postgres, redis, mysql or store
	Replica   *int              `yaml:"replica,omitempty"`   // clock_skew, db_timezone (and kill, pause, restart): the replica's index
	Direction string            `yaml:"direction,omitempty"` // upstream | downstream (default downstream)
	Order     string            `yaml:"order,omitempty"`     // gateway faults, kill_in_hang: aimed at this order
	Params    map[string]string `yaml:"params,omitempty"`
}

// KeyStore, as the store a fault names (a link "replica0->store", a
// store_restart's store), is the target's key store, its first need:
// Redis against a target on Redis, PostgreSQL against the reference. An
// incident that slows or restarts "the store" then plays against any
// target that keeps one.
const KeyStore = "store"

// On is f with KeyStore replaced by store, the target's key store.
func (f Fault) On(store string) Fault {
	if replica, ok := strings.CutSuffix(f.Link, "->"+KeyStore); ok {
		f.Link = replica + "->" + store
	}
	if f.Store == KeyStore {
		f.Store = store
	}
	return f
}

// NamesKeyStore says whether f names KeyStore.
func (f Fault) NamesKeyStore() bool {
	return strings.HasSuffix(f.Link, "->"+KeyStore) || f.Store == KeyStore
}

// Spec is the fault as package faults reads it, aimed at the real order
// (gateway faults, kill_in_hang); the one translation from a scenario's
// fault to what is injected.
func (f Fault) Spec(order string) faults.Spec {
	sp := faults.Spec{Kind: f.Kind, Target: cmp.Or(f.Link, f.Store, f.replica()), Direction: f.Direction, Params: maps.Clone(f.Params)}
	if kind, ok := strings.CutPrefix(f.Kind, "gateway:"); ok {
		sp.Kind, sp.Target = kind, "gateway"
	}
	if order != "" {
		if sp.Params == nil {
			sp.Params = map[string]string{}
		}
		sp.Params["order"] = order
	}
	return sp
}

// replica is the fault's replica as a fault target ("replica1"), or "".
func (f Fault) replica() string {
	if f.Replica == nil {
		return ""
	}
	return fmt.Sprintf("replica%d", *f.Replica)
}

// String is the step as one replayable line.
func (s Step) String() string {
	if s.Point != "" {
		return s.line() + " @" + s.Point + ":" + s.Payment
	}
	return s.line()
}

func (s Step) line() string {
	switch {
	case s.Send != nil:
		return s.Send.String()
	case s.Wait != nil:
		return s.Wait.String()
	case s.Fault != nil:
		return s.Fault.String()
	case s.Heal != "":
		return "heal " + s.Heal
	case s.Kill != nil:
		return fmt.Sprintf("kill replica%d", *s.Kill)
	case s.Restart != nil:
		return fmt.Sprintf("restart replica%d", *s.Restart)
	case s.Pause != nil:
		return fmt.Sprintf("pause replica%d", *s.Pause)
	case s.Resume != nil:
		return fmt.Sprintf("resume replica%d", *s.Resume)
	case s.Release != "":
		return "release " + s.Release
	}
	return "(empty step)"
}

func (s Send) String() string {
	var b strings.Builder
	mode := "send"
	if s.Async {
		mode = "send-async"
	}
	fmt.Fprintf(&b, "%s %s client%d->replica%d tenant%d key=%s order=%s amount=%d %s", mode, s.ID, s.Client, s.Replica, s.Tenant, s.Key, s.Order, s.Amount, s.Currency)
	if s.KeyForm != "" {
		fmt.Fprintf(&b, " key_form=%s", s.KeyForm)
	}
	if s.Writing != "" {
		fmt.Fprintf(&b, " writing=%s", s.Writing)
	}
	if s.Edit != "" {
		fmt.Fprintf(&b, " edit=%s", s.Edit)
	}
	if s.Body != "" {
		fmt.Fprintf(&b, " body=%s", s.Body)
	}
	if s.Converge {
		b.WriteString(" until-definitive")
	}
	if s.RetryWithin > 0 {
		fmt.Fprintf(&b, " retry-within=%gxTTL", s.RetryWithin)
	}
	return b.String()
}

func (w Wait) String() string {
	switch {
	case len(w.Responses) > 0:
		return "wait responses " + strings.Join(w.Responses, ",")
	case w.Hold != "":
		return "wait gateway-hold " + w.Hold
	case w.Charge != "":
		return "wait charge " + w.Charge
	case w.TTL != 0 && w.From != "":
		return fmt.Sprintf("wait %gxTTL from %s's answer", w.TTL, w.From)
	case w.TTL != 0:
		return fmt.Sprintf("wait %gxTTL", w.TTL)
	case w.Recovery && w.Within > 0:
		return "wait recovery-window within " + w.Within.String()
	case w.Recovery:
		return "wait recovery-window"
	}
	return "wait " + w.For.String()
}

func (f Fault) String() string {
	s := fmt.Sprintf("fault %s %s", f.ID, f.Kind)
	if t := cmp.Or(f.Link, f.Store, f.replica()); t != "" {
		s += " " + t
	}
	if f.Direction != "" {
		s += " " + f.Direction
	}
	if f.Order != "" {
		s += " order=" + f.Order
	}
	for _, k := range slices.Sorted(maps.Keys(f.Params)) {
		s += fmt.Sprintf(" %s=%s", k, f.Params[k])
	}
	return s
}

// Requests counts the sends of a scenario; Faults counts its faults and
// kills. They measure a shrunk counterexample's size.
func (sc Scenario) Requests() int {
	n := 0
	for _, s := range sc.Steps {
		if s.Send != nil {
			n++
		}
	}
	return n
}

// Faults counts fault injections, kills and pauses.
func (sc Scenario) Faults() int {
	n := 0
	for _, s := range sc.Steps {
		if s.Fault != nil || s.Kill != nil || s.Pause != nil {
			n++
		}
	}
	return n
}
