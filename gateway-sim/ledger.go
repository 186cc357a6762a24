package gatewaysim

import (
	"maps"
	"time"
)

// Charge statuses as they appear in the ledger and in Stripe charge objects.
// A decline is a ledger entry too: the gateway made a definitive decision
// under the key, and the checker needs to see it to judge M3 and M4.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Charge is one ledger entry: a decision of the gateway about money. The
// ledger is the oracle, so an entry is written at the instant the charge
// commits, before any fault withholds or loses the response. The JSON form is
// what GET /_sim/ledger serves, so a remote harness can decode straight into
// this type.
type Charge struct {
	ID             string    `json:"id"`
	APIKey         string    `json:"api_key"`
	IdempotencyKey string    `json:"idempotency_key"` // "" when the request carried none
	OrderID        string    `json:"order_id"`        // the order the trace attributes it to ("" for none)
	Amount         int64     `json:"amount"`
	Currency       string    `json:"currency"` // lower case, as Stripe normalises it
	Status         string    `json:"status"`   // StatusSucceeded or StatusFailed
	Created        time.Time `json:"created"`

	Description    string            `json:"description,omitempty"`
	Customer       string            `json:"customer,omitempty"`
	Source         string            `json:"source,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	FailureCode    string            `json:"failure_code,omitempty"` // e.g. card_declined
	FailureMessage string            `json:"failure_message,omitempty"`
	DeclineCode    string            `json:"decline_code,omitempty"` // e.g. insufficient_funds
	// Reference is the merchant reference the payment request carried
	// (Checkout.com's and Adyen's reference; Stripe has none).
	Reference string `json:"reference,omitempty"`
	// PaymentIntent is the PaymentIntent whose confirmation made this
	// charge ("" for POST /v1/charges). A confirmed PaymentIntent is one
	// money movement: this entry, so an answer naming either id names it.
	PaymentIntent string `json:"payment_intent,omitempty"`
}

// Succeeded reports whether the charge moved money.
func (c Charge) Succeeded() bool { return c.Status == StatusSucceeded }

// clone copies the charge deeply enough that callers may mutate it.
func (c Charge) clone() Charge {
	c.Metadata = maps.Clone(c.Metadata)
	return c
}

// ledger is the append-only list of charges since the last reset, indexed
// by id for GET /v1/charges/{id}; with a retention (Sim.ForgetAfter) the
// oldest are forgotten as new ones come. Guarded by Sim.mu.
type ledger struct {
	charges []Charge
	byID    map[string]int // position counting from the first charge since reset
	base    int            // charges forgotten from the front
}

func newLedger() ledger {
	return ledger{byID: make(map[string]int)}
}

// append adds c, forgetting the charges made more than retain before it
// (0: none).
func (l *ledger) append(c Charge, retain time.Duration) {
	if retain > 0 {
		l.forgetBefore(c.Created.Add(-retain))
	}
	l.byID[c.ID] = l.base + len(l.charges)
	l.charges = append(l.charges, c)
}

// forgetBefore drops the charges created before t.
func (l *ledger) forgetBefore(t time.Time) {
	n := 0
	for ; n < len(l.charges) && l.charges[n].Created.Before(t); n++ {
		delete(l.byID, l.charges[n].ID)
	}
	clear(l.charges[:n]) // let the charges be collected
	l.charges = l.charges[n:]
	l.base += n
}

func (l *ledger) get(id string) (Charge, bool) {
	i, ok := l.byID[id]
	if !ok {
		return Charge{}, false
	}
	return l.charges[i-l.base], true
}

func (l *ledger) snapshot() []Charge {
	out := make([]Charge, len(l.charges))
	for i, c := range l.charges {
		out[i] = c.clone()
	}
	return out
}

// Ledger returns every charge since the last Reset (of those a retention
// keeps, ForgetAfter), in commit order. The slice is a copy: the harness
// can keep it as evidence while the simulator carries on.
func (s *Sim) Ledger() []Charge {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ledger.snapshot()
}
