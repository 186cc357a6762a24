package history

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// Version is the schema version written into every document. A loader
// refuses documents of another version instead of guessing at their meaning:
// a checker that misreads a history would hand out a PASS it never earned.
const Version = 1

// Outcome is how the recording client classified one completed operation.
// It is the client's only interpretation of a response; everything else is
// left to the checker.
type Outcome string

const (
	// OK is a definitive success: a 2xx status.
	OK Outcome = "ok"
	// Fail is a definitive failure: a 4xx status other than the retryable
	// ones (402 decline, 400 bad key, 422 payload mismatch, ...). The
	// client will not retry and will pay some other way, so such an answer
	// must have moved no money.
	Fail Outcome = "fail"
	// Info is indeterminate: a 5xx, a retryable 4xx (409, 408, 423, 425,
	// 429), any failure carrying Retry-After, a timeout, a reset. The
	// client does not know whether money moved and retries with the same
	// key.
	Info Outcome = "info"
)

// Classify maps an HTTP status (0 for a transport error) to an Outcome.
// 409 (in flight), 408 (request timeout), 423 (locked), 425 (too early)
// and 429 (too many requests: Stripe's answer to some lock conflicts) are
// indeterminate because they tell the client to try again: the request
// holding the key may still charge.
func Classify(status int) Outcome {
	switch {
	case status >= 200 && status < 300:
		return OK
	case retryable(status):
		return Info
	case status >= 400 && status < 500:
		return Fail
	default:
		return Info
	}
}

// ClassifyAnswer is Classify for a response that arrived, with its
// Retry-After header: any failure carrying Retry-After is indeterminate,
// since the server itself tells the client to come back. A 2xx stays OK
// whatever its headers: it names a charge, and the client acts on it.
func ClassifyAnswer(status int, retryAfter string) Outcome {
	o := Classify(status)
	if o == Fail && retryAfter != "" {
		return Info
	}
	return o
}

// retryable reports whether a 4xx status asks the client to try again.
func retryable(status int) bool {
	switch status {
	case 408, 409, 423, 425, 429:
		return true
	}
	return false
}

// Op is one client request and its completion. Invoke and Complete are
// offsets from the history's monotonic base time, so ops, faults and ledger
// charges share one clock.
type Op struct {
	ID      int    `json:"id"`
	Client  int    `json:"client"`  // logical client: one lane in the timeline
	Replica int    `json:"replica"` // replica the request was sent to
	Tenant  string `json:"tenant"`  // bearer token the request carried ("" = none sent)
	// Key is the idempotency key the harness meant; KeyHeader is the exact
	// header value sent (the quoted sf-string form, an over-long or empty
	// value), and NoKey says that no header was sent at all.
	Key       string `json:"key"`
	KeyHeader string `json:"key_header"`
	NoKey     bool   `json:"no_key,omitempty"`
	// Order, Amount and Currency are what the request asked for; Method,
	// Path, ContentType and Body are exactly what was sent, so the checker
	// can judge payload equality itself: the same key on another path (an
	// order id in the path) is another request, and a form body compares
	// by its parameters. A history recorded before requests had a shape of
	// their own has no Method, Path or ContentType: its bodies are JSON,
	// all sent to one path.
	Order string `json:"order"`
	// OrderSym is the scenario's own name for Order ("o3"): a real order
	// id is never parsed back into it.
	OrderSym    string `json:"order_sym,omitempty"`
	Amount      int64  `json:"amount"`
	Currency    string `json:"currency"`
	Method      string `json:"method,omitempty"`
	Path        string `json:"path,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Body        string `json:"body"`
	// Purpose is the generator's label for why this op exists ("first",
	// "retry", "duplicate", "late-retry@2xTTL", "mutated:amount", ...).
	// The checker never trusts it for a verdict; reports show it.
	Purpose string `json:"purpose,omitempty"`

	Invoke   time.Duration `json:"invoke"`
	Complete time.Duration `json:"complete"`
	Outcome  Outcome       `json:"outcome"`
	Status   int           `json:"status"` // 0 when no response arrived
	// The judged part of a success body, and response headers of interest.
	ChargeID     string `json:"charge_id,omitempty"`
	RespAmount   int64  `json:"resp_amount,omitempty"`
	RespCurrency string `json:"resp_currency,omitempty"`
	RespOrder    string `json:"resp_order,omitempty"`
	RespStatus   string `json:"resp_status,omitempty"` // body "status" field, e.g. "succeeded"
	Replayed     bool   `json:"replayed,omitempty"`    // Idempotent-Replayed: true
	RetryAfter   string `json:"retry_after,omitempty"`
	Error        string `json:"error,omitempty"` // transport error or unparsable body
}

// ParamCrashPoint is the Fault.Params key that names the crash point a
// fault belongs to ("kill-in-hang", "charge-then-drop", ...: a crashwave.Table
// row's Name). Every fault a crash-window example injects for its
// crash point carries it, the kill and the hang of kill-in-hang alike; the
// checker counts the point as reached in a history when every fault
// carrying it fired.
const ParamCrashPoint = "crash_point"

// ParamCrashPayment is the Fault.Params key that names the order of the
// payment a crash-point fault strikes: a crash wave strikes many payments,
// and coverage counts payments per point, not histories.
const ParamCrashPayment = "crash_payment"

// Fault is one injected fault, from injection to heal. Inject is when it
// was armed; Fired is when it actually struck (a kill delivered, a gateway
// rule applied to a request, a hold taken), so that a fault armed for a
// request that never came proves nothing.
type Fault struct {
	ID     int               `json:"id"`
	Name   string            `json:"name"`   // "latency", "reset_peer", "kill", "pause", "gateway:charge_then_hang", ...
	Target string            `json:"target"` // "client->replica0", "replica1->gateway", "replica0->postgres", "replica1", "gateway"
	Params map[string]string `json:"params,omitempty"`
	Inject time.Duration     `json:"inject"`
	// Heal is when the fault was removed; Healed is false for a fault that
	// was still active when recording stopped.
	Heal   time.Duration `json:"heal"`
	Healed bool          `json:"healed"`
	Order  string        `json:"order,omitempty"` // for gateway faults matched by order
	// Fired is when the fault first struck; zero (absent in JSON) means it
	// was armed but never seen to fire. Network and process faults strike
	// when they take effect (Recorder.Inject with FiredOnInject); a
	// gateway rule when it first applies to a request, as the run's ledger
	// feed sees it. The checker credits crash safety (L4) only for faults
	// that fired.
	Fired time.Duration `json:"fired,omitempty"`
	// Foreign names the example that injected the fault when another
	// example did: an environment-wide fault (a link, a process, a gateway
	// rule for every order) is recorded in every example in flight while
	// it is active, since each lived through it. The checker holds answers
	// to convergence only after foreign faults too have healed and the
	// recovery window has passed, and lets them excuse a disturbed answer
	// on their path; it never counts them as the example's coverage (crash
	// points, crash-class faults, L4).
	Foreign string `json:"foreign,omitempty"`
	// Class is what the fault can do to a payment (Crash, Slows,
	// Business, Disturbs), declared by its fault kind when it is recorded.
	// Optional: a document written before it existed has none, and
	// ClassOf reads the class of such a fault from its name.
	Class Class `json:"class,omitempty"`
	// Scope is how far the fault reaches (one payment, one replica, the
	// whole environment), declared by its fault kind when it is recorded:
	// a fault beyond one payment is lived through by every example in
	// flight. Optional: a document written before it existed has none.
	Scope Scope `json:"scope,omitempty"`
	// Skew bounds the offset of the target replica's clock from the
	// recording's clock, as measured while the fault was in force (a
	// clock_skew fault reads it from the replica's HTTP Date header):
	// the replica may have counted a TTL that much early or late, so the
	// checker widens the undecided band around a promise's end by the
	// largest Skew a history lived through.
	Skew time.Duration `json:"skew,omitempty"`
}

// Class is what a fault can do to a payment; the checker judges faults by
// their class, never by their names.
type Class string

const (
	// Crash can leave money and the key's record out of step: a process
	// killed or restarted mid-request, a gateway that charged and did not
	// say so. Only crash-class faults seen to fire certify crash safety
	// (L4).
	Crash Class = "crash"
	// Slows only delays traffic: it excuses a 5xx that came after
	// waiting, never an immediate one.
	Slows Class = "slows"
	// Business is a definitive business answer (a decline): it makes
	// nothing indeterminate and disturbs no request.
	Business Class = "business"
	// Disturbs is every other fault (a link cut, reset or timed out, a
	// paused process, a gateway failing before it charges): it makes
	// answers on its path indeterminate until it heals and the recovery
	// window passes.
	Disturbs Class = "disturbs"
	// Skews moves a replica's clock (by Fault.Skew) or its database
	// sessions' time zone while it is in force. Applying and undoing it
	// relaunch the replica, and each relaunch is recorded as a fault of
	// its own (Crash, named "relaunch"); in between it disturbs no
	// request, so convergence is not held back by it, but a server whose
	// leases follow the skewed clock may take that much longer to
	// recover: the checker widens the recovery window, and the band
	// around a promise's end, by the Skew in force.
	Skews Class = "skews"
)

// Scope is how far a fault reaches. A fault declares it beside its
// Class; the runner reads it to decide whether the fault keeps the other
// examples' requests out (the gate), is recorded in their histories
// (foreign) and in which order it is healed, and nobody infers it from
// a fault's name or target.
type Scope string

const (
	// Payment is a fault aimed at one order's payment (a gateway rule
	// matched by order): it stays inside the example that owns the order.
	Payment Scope = "payment"
	// Replica is a fault on one replica's process (a kill, a pause, a
	// restart, a relaunch with another clock or zone, a kill inside a
	// gateway hold): every request routed to the replica lives through
	// it, whatever its example.
	Replica Scope = "replica"
	// Environment is a fault on what every replica shares or depends on:
	// a link, a store, the gateway for every order.
	Environment Scope = "environment"
)

// ScopeOf is f's Scope; a fault recorded before Scope existed reached
// one payment when it was aimed at an order, and beyond it otherwise.
func (f Fault) ScopeOf() Scope {
	switch {
	case f.Scope != "":
		return f.Scope
	case f.Order != "":
		return Payment
	}
	return Environment
}

// HasFired reports whether f was seen to strike.
func (f Fault) HasFired() bool { return f.Fired > 0 }

// FiredOnInject, as Fault.Fired given to Recorder.Inject, stamps Fired
// with the injection time: the fault struck as it was injected.
const FiredOnInject time.Duration = -1

// Charge is one money movement recorded by the gateway's ledger, the ground
// truth. Status is "succeeded" for moved money and "failed" for a decline
// (stored and replayed, but no money moved).
type Charge struct {
	ID             string        `json:"id"`
	Order          string        `json:"order"`
	Amount         int64         `json:"amount"`
	Currency       string        `json:"currency"`
	Status         string        `json:"status"`
	IdempotencyKey string        `json:"idempotency_key"`
	APIKey         string        `json:"api_key"`
	At             time.Duration `json:"at"`
	// Alias is another id the provider gives this one money movement
	// ("" for none): on Stripe, the PaymentIntent whose confirmation made
	// the charge. An answer may name either id (see ChargeIDs). Its JSON
	// name is the one histories have always stored.
	Alias string `json:"payment_intent,omitempty"`
}

// ChargeIDs resolves the id a server's success answer names to the ledger
// charge it identifies. A charge id is itself; an alias (a PaymentIntent
// id) is the charge it names (its succeeded one, when a decline came
// first). An id the ledger does not know is returned unchanged, so it is
// still no such charge to whoever looks it up.
type ChargeIDs map[string]string

// ChargeIDsOf indexes the aliases of a ledger's charges.
func ChargeIDsOf(charges []Charge) ChargeIDs {
	ids := ChargeIDs{}
	succeeded := map[string]bool{}
	for _, c := range charges {
		if c.Alias == "" || succeeded[c.Alias] {
			continue
		}
		ids[c.Alias] = c.ID
		succeeded[c.Alias] = c.Succeeded()
	}
	return ids
}

// Resolve is the ledger charge id names.
func (ids ChargeIDs) Resolve(id string) string {
	if ch, ok := ids[id]; ok {
		return ch
	}
	return id
}

// GatewayReplay is one answer the gateway gave from its idempotency store.
type GatewayReplay struct {
	Order          string        `json:"order"`
	ChargeID       string        `json:"charge_id"`
	IdempotencyKey string        `json:"idempotency_key"`
	At             time.Duration `json:"at"`
}

// Succeeded reports whether the charge moved money.
func (c Charge) Succeeded() bool { return c.Status == "succeeded" }

// History is one run's record: every op, fault and charge on one clock.
type History struct {
	Version  int      `json:"version"`
	Target   string   `json:"target"`
	Family   string   `json:"family"`
	Seed     uint64   `json:"seed"`
	Replicas int      `json:"replicas"`
	Policy   Policy   `json:"policy"`
	Tenants  []string `json:"tenants,omitempty"`
	// Stores are the stores the target keeps its keys in (its needs):
	// the crash points of these stores are the ones L4 asks for
	// (crashwave.For). None for a target with keys in memory.
	Stores  []string `json:"stores,omitempty"`
	Ops     []Op     `json:"ops"`
	Faults  []Fault  `json:"faults"`
	Charges []Charge `json:"charges"`
	// GatewayReplays are the gateway's answers from its own idempotency
	// store for this history's orders: the server sent a charge it had
	// sent before (a recovery, or a missing lock that only the gateway
	// held).
	GatewayReplays []GatewayReplay `json:"gateway_replays,omitempty"`
	// Unstruck are the crash-wave payments whose strike did not happen,
	// and why (optional): the payment is judged without it, and a report
	// names the point.
	Unstruck []Unstruck `json:"unstruck,omitempty"`
	// Gateway is how the gateway kept its idempotency keys (optional).
	Gateway Gateway `json:"gateway,omitzero"`
	// End is when recording stopped and the ledger was last read.
	End time.Duration `json:"end"`
	// Complete is false when the run was interrupted: a checker may still
	// find violations in it, but absence of violations proves less.
	Complete bool `json:"complete"`
	// OtherOrders lists orders that other examples sharing the environment
	// sent. A ledger charge for an order that neither this history's
	// requests nor this list name is money nobody asked for (accounting,
	// A1).
	//
	// Deprecated: nothing writes it (a history holds its own orders'
	// charges only, and the run's reconciliation, ledger.Reconcile,
	// attributes every other charge). It stays so that a document that
	// has it still loads (Read refuses unknown fields) and is judged as
	// it was.
	OtherOrders []string `json:"other_orders,omitempty"`
	// ClockOffset is the measured offset of the gateway's ledger clock
	// against the recording's clock (ledger minus recorder; zero when not
	// measured). Charge.At is already on the recording's clock; the
	// checker widens its attribution window and its expiry band by it.
	//
	// Deprecated: nothing measures it (the gateway and the recorder share
	// one machine's clock). It stays so that a document that has it still
	// loads (Read refuses unknown fields) and is judged as it was.
	ClockOffset time.Duration `json:"clock_offset,omitempty"`
	// Touches are the evidence that something besides idemcheck reached
	// the harness (T1): a run-wide record, in the history the run's
	// accounting judges. Proofs is how many times idemcheck proved the
	// harness as it left it (at each inject and heal): T1 is exercised
	// when it is above zero.
	Touches []Touch `json:"touches,omitempty"`
	Proofs  int     `json:"proofs,omitempty"`
}

// Unstruck is a crash-wave payment whose strike did not happen: its
// first request was answered before the gateway held a charge to strike
// in, or the strike would have begun past the wave's room.
type Unstruck struct {
	Point   string `json:"point"`   // the crash point (crashwave.Table) it was to be struck at
	Payment string `json:"payment"` // its real order
	Why     string `json:"why"`
}

// Write encodes h as indented JSON.
func (h *History) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(h)
}

// WriteFile writes h to path.
func (h *History) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	if err := h.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("write history %s: %w", path, err)
	}
	return f.Close()
}

// Read decodes a history and refuses unknown versions and fields.
func Read(r io.Reader) (*History, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var h History
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("decode history: %w", err)
	}
	if h.Version != Version {
		return nil, fmt.Errorf("history version %d: this build reads version %d", h.Version, Version)
	}
	return &h, nil
}

// ReadFile loads a history from path; errors name the file.
func ReadFile(path string) (*History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}
