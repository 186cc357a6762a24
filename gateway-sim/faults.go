package gatewaysim

import (
	"encoding/json"
	"fmt"
	"time"
)

// FaultKind names one way the gateway misbehaves. The kinds are the points
// at which real payment incidents happen: before the money moves, after it
// moved but before the caller heard, and the caller hearing something false.
type FaultKind string

// The fault kinds. A "charge then ..." fault commits the charge (ledger
// entry, idempotency record, "charge" event) before it touches the response,
// so a re-send with the same key replays the charge.
const (
	// Decline declines the card: 402 card_error/card_declined. The decline is
	// stored under the key and replayed like a charge.
	Decline FaultKind = "decline"
	// FailBeforeCharge is an outage in front of the gateway: 500, nothing
	// stored, so a re-send with the same key is processed afresh.
	FailBeforeCharge FaultKind = "fail_before_charge"
	// ChargeThenFail commits the charge and answers 500.
	ChargeThenFail FaultKind = "charge_then_fail"
	// ChargeThenDrop commits the charge and closes the connection without a
	// response.
	ChargeThenDrop FaultKind = "charge_then_drop"
	// ChargeThenHang commits the charge and withholds the response until
	// Release: the crash window in which a harness kills the caller.
	ChargeThenHang FaultKind = "charge_then_hang"
	// Latency delays the request by Fault.Latency before the gateway decides,
	// with the key in flight meanwhile (a concurrent duplicate gets 409).
	Latency FaultKind = "latency"
)

// FaultKinds lists every kind, for help texts and validation.
var FaultKinds = []FaultKind{Decline, FailBeforeCharge, ChargeThenFail, ChargeThenDrop, ChargeThenHang, Latency}

// Match selects the requests a fault fires on; every non-zero field must
// match. Faults are considered only for requests that move money (a
// charge, a PaymentIntent created with confirm=true, a confirm) and that
// the gateway processes afresh: a replay from the idempotency store is not
// a new decision and cannot be faulted.
type Match struct {
	// OrderID matches metadata[order_id] (a PaymentIntent's, on its
	// confirm); "" matches any order.
	OrderID string `json:"order_id,omitempty"`
	// Nth matches the n-th POST to the Stripe API since reset (charges,
	// PaymentIntent creates and confirms), counting every such request the
	// simulator received (1-based); 0 matches any. It fires only on a
	// request that moves money.
	Nth int `json:"nth,omitempty"`
	// Probability fires the fault with this probability, drawn from the
	// seeded stream only when the other fields match; 0 means always.
	Probability float64 `json:"probability,omitempty"`
}

// Fault is a rule "when a request matches, misbehave like Kind". Latency is
// the delay for Kind Latency; on any other kind it delays the request before
// the fault's effect (a slow outage, a slow decline). Times bounds the number
// of firings; 0 is unlimited.
type Fault struct {
	Kind    FaultKind
	Match   Match
	Latency time.Duration
	Times   int
}

// Validate reports a fault that could never fire as described. AddFault
// accepts any fault (an invalid one simply never fires); the HTTP API
// rejects invalid faults with 400.
func (f Fault) Validate() error {
	switch {
	case !knownKind(f.Kind):
		return fmt.Errorf("%w: unknown kind %q (want one of %v)", ErrInvalidFault, f.Kind, FaultKinds)
	case f.Kind == Latency && f.Latency <= 0:
		return fmt.Errorf("%w: latency fault needs a positive latency", ErrInvalidFault)
	case f.Latency < 0, f.Times < 0, f.Match.Nth < 0:
		return fmt.Errorf("%w: latency, times and nth must not be negative", ErrInvalidFault)
	case f.Match.Probability < 0 || f.Match.Probability > 1:
		return fmt.Errorf("%w: probability %v outside [0,1]", ErrInvalidFault, f.Match.Probability)
	}
	return nil
}

func knownKind(k FaultKind) bool {
	for _, known := range FaultKinds {
		if k == known {
			return true
		}
	}
	return false
}

// outcome reports whether the kind decides the request's fate, as opposed to
// only delaying it; a request gets at most one outcome fault.
func (k FaultKind) outcome() bool { return k != Latency }

// postCommit reports whether the kind acts after the charge committed.
func (k FaultKind) postCommit() bool {
	return k == ChargeThenFail || k == ChargeThenDrop || k == ChargeThenHang
}

// faultJSON is the wire form: durations as Go duration strings ("200ms"),
// never bare numbers, so a unit can never be misread.
type faultJSON struct {
	ID      string    `json:"id,omitempty"`
	Kind    FaultKind `json:"kind"`
	Match   Match     `json:"match"`
	Latency string    `json:"latency,omitempty"`
	Times   int       `json:"times,omitempty"`
	Fired   int       `json:"fired,omitempty"`
}

func (f Fault) wire() faultJSON {
	w := faultJSON{Kind: f.Kind, Match: f.Match, Times: f.Times}
	if f.Latency != 0 {
		w.Latency = f.Latency.String()
	}
	return w
}

func (w faultJSON) fault() (Fault, error) {
	f := Fault{Kind: w.Kind, Match: w.Match, Times: w.Times}
	if w.Latency == "" {
		return f, nil
	}
	d, err := time.ParseDuration(w.Latency)
	if err != nil {
		return f, fmt.Errorf("%w: latency: %v", ErrInvalidFault, err)
	}
	f.Latency = d
	return f, nil
}

// MarshalJSON encodes the fault as /_sim/faults takes it:
// {"kind":"latency","match":{"order_id":"ord_1"},"latency":"200ms","times":1}.
func (f Fault) MarshalJSON() ([]byte, error) { return json.Marshal(f.wire()) }

// UnmarshalJSON decodes the /_sim/faults form; latency must be a Go duration
// string.
func (f *Fault) UnmarshalJSON(b []byte) error {
	var w faultJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidFault, err)
	}
	got, err := w.fault()
	if err != nil {
		return err
	}
	*f = got
	return nil
}

// FaultStatus is an installed fault with its id and how often it fired, as
// listed by Faults and GET /_sim/faults.
type FaultStatus struct {
	ID    string
	Fault Fault
	Fired int
}

// MarshalJSON flattens the status into the fault's wire form plus id and fired.
func (st FaultStatus) MarshalJSON() ([]byte, error) {
	w := st.Fault.wire()
	w.ID, w.Fired = st.ID, st.Fired
	return json.Marshal(w)
}

// UnmarshalJSON is the inverse of MarshalJSON, for Client.
func (st *FaultStatus) UnmarshalJSON(b []byte) error {
	var w faultJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	f, err := w.fault()
	if err != nil {
		return err
	}
	*st = FaultStatus{ID: w.ID, Fault: f, Fired: w.Fired}
	return nil
}
