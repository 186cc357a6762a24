package gatewaysim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// OrderPlaceholder stands for the order id in a description pattern.
const OrderPlaceholder = "{order_id}"

// Trace says where a service names the order on its gateway calls, so
// that every charge is attributed to the order it pays for. A service is
// taken as it is: it may forward the order under any metadata key, only
// in the charge's description, as the payment's merchant reference
// (Checkout.com's and Adyen's reference), or not at all. In the last case the
// harness gives every payment of a run an amount and currency no other
// payment has, tells the simulator which order each pair stands for
// (Expect), and a charge is attributed by its amount and currency.
//
// Exactly one of the fields is set; the zero Trace is metadata[order_id],
// the charge protocol's own choice.
type Trace struct {
	// Metadata is the metadata key whose value is the order id.
	Metadata string `json:"metadata,omitempty"`
	// Description is the charge description with the order id in it,
	// written with OrderPlaceholder ("Order {order_id}").
	Description string `json:"description,omitempty"`
	// Amount attributes a charge by its amount and currency.
	Amount bool `json:"amount,omitempty"`
	// Reference attributes a payment by its merchant reference, the field
	// Checkout.com's and Adyen's payment requests name the order in.
	Reference bool `json:"reference,omitempty"`
}

// DefaultTrace is metadata[order_id].
var DefaultTrace = Trace{Metadata: "order_id"}

// ParseTrace reads the written form of a trace: metadata[KEY],
// description:PATTERN (PATTERN holds {order_id} once), reference or
// amount. The error says which forms are accepted.
func ParseTrace(s string) (Trace, error) {
	s = strings.TrimSpace(s)
	var t Trace
	switch {
	case s == "amount":
		t.Amount = true
	case s == "reference":
		t.Reference = true
	case strings.HasPrefix(s, "metadata[") && strings.HasSuffix(s, "]"):
		t.Metadata = s[len("metadata[") : len(s)-1]
	case strings.HasPrefix(s, "description:"):
		t.Description = strings.TrimSpace(s[len("description:"):])
	}
	if !t.IsZero() {
		return t.checked()
	}
	return Trace{}, fmt.Errorf("%w: %q: want metadata[KEY], description:PATTERN with %s in it, reference, or amount", ErrInvalidTrace, s, OrderPlaceholder)
}

// Validate reports a trace that names no place, several, or a pattern
// without exactly one OrderPlaceholder.
func (t Trace) Validate() error {
	_, err := t.checked()
	return err
}

func (t Trace) checked() (Trace, error) {
	set := 0
	for _, on := range []bool{t.Metadata != "", t.Description != "", t.Amount, t.Reference} {
		if on {
			set++
		}
	}
	switch {
	case set != 1:
		return t, fmt.Errorf("%w: set exactly one of metadata, description, reference and amount", ErrInvalidTrace)
	case t.Metadata != "" && len(t.Metadata) > maxMetadataKey:
		return t, fmt.Errorf("%w: metadata key %q: at most %d characters", ErrInvalidTrace, t.Metadata, maxMetadataKey)
	case t.Description != "" && strings.Count(t.Description, OrderPlaceholder) != 1:
		return t, fmt.Errorf("%w: description pattern %q: it must hold %s once", ErrInvalidTrace, t.Description, OrderPlaceholder)
	}
	return t, nil
}

// String is the written form ParseTrace reads.
func (t Trace) String() string {
	switch {
	case t.Amount:
		return "amount"
	case t.Reference:
		return "reference"
	case t.Description != "":
		return "description:" + t.Description
	case t.Metadata != "":
		return "metadata[" + t.Metadata + "]"
	}
	return DefaultTrace.String()
}

// IsZero reports the zero Trace (DefaultTrace in effect).
func (t Trace) IsZero() bool { return t == Trace{} }

// OrderOf is the order ledger entry c names under t ("" when it names
// none); an amount trace names none here (see Order).
func (t Trace) OrderOf(c Charge) string {
	if t.Reference {
		return c.Reference
	}
	return t.Order(c.Metadata, c.Description)
}

// Order is the order a call with these metadata and description names
// under t ("" when it names none). An amount trace names none here: the
// tracer resolves it from the amounts the harness expects; a reference
// trace neither (OrderOf reads the reference).
func (t Trace) Order(metadata map[string]string, description string) string {
	switch {
	case t.Amount, t.Reference:
		return ""
	case t.Description != "":
		pre, post, _ := strings.Cut(t.Description, OrderPlaceholder)
		d := description
		if len(d) <= len(pre)+len(post) || !strings.HasPrefix(d, pre) || !strings.HasSuffix(d, post) {
			return ""
		}
		return d[len(pre) : len(d)-len(post)]
	case t.Metadata != "":
		return metadata[t.Metadata]
	}
	return metadata[DefaultTrace.Metadata]
}

// FindTrace is where charge c names order: metadata[order_id], else its
// merchant reference, else the metadata key whose value it is (by name),
// else the description around it, else nowhere, and then only an amount
// trace can attribute the service's charges.
func FindTrace(c Charge, order string) Trace {
	if c.Metadata[DefaultTrace.Metadata] == order {
		return DefaultTrace
	}
	if c.Reference == order {
		return Trace{Reference: true}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Metadata)) {
		if c.Metadata[k] == order {
			return Trace{Metadata: k}
		}
	}
	if strings.Count(c.Description, order) == 1 {
		return Trace{Description: strings.Replace(c.Description, order, OrderPlaceholder, 1)}
	}
	return Trace{Amount: true}
}

// tracer attributes requests to orders: the one place the simulator
// decides which order a request pays for. Every event, ledger entry,
// hold and fault match reads the order it gives. It has its own lock.
type tracer struct {
	mu      sync.Mutex
	trace   Trace
	amounts map[string]string // amount key -> order, for an amount trace
}

func newTracer(t Trace) *tracer {
	return &tracer{trace: t, amounts: map[string]string{}}
}

func amountKey(amount int64, currency string) string {
	return strconv.FormatInt(amount, 10) + " " + strings.ToLower(currency)
}

// orderOf is the order req pays for under the trace in force.
func (tr *tracer) orderOf(req *chargeRequest) string {
	if req == nil {
		return ""
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch {
	case tr.trace.Amount:
		return tr.amounts[amountKey(req.amount, req.currency)]
	case tr.trace.Reference:
		return req.reference
	}
	return tr.trace.Order(req.metadata, req.description)
}

func (tr *tracer) set(t Trace) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.trace = t
}

func (tr *tracer) get() Trace {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.trace
}

// expect notes that amount and currency pay for order; a pair already
// taken by another order is an error, since a charge for it could not
// be attributed to one order.
func (tr *tracer) expect(order string, amount int64, currency string) error {
	k := amountKey(amount, currency)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if o, taken := tr.amounts[k]; taken && o != order {
		return fmt.Errorf("%w: amount %s already pays for order %s, not %s", ErrInvalidTrace, k, o, order)
	}
	tr.amounts[k] = order
	return nil
}

// Expectation is one payment an amount trace attributes: its amount and
// currency pay for Order.
type Expectation struct {
	Order    string `json:"order"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// SetTrace makes t the trace every later request is attributed by.
func (s *Sim) SetTrace(t Trace) error {
	if err := t.Validate(); err != nil {
		return err
	}
	s.tracer.set(t)
	s.log.Info("trace", "trace", t.String())
	return nil
}

// Trace is the trace in force.
func (s *Sim) Trace() Trace { return s.tracer.get() }

// Expect notes that e's amount and currency pay for its order, for an
// amount trace.
func (s *Sim) Expect(e Expectation) error {
	if e.Order == "" || e.Amount <= 0 || !isCurrency(e.Currency) {
		return fmt.Errorf("%w: expectation needs an order, a positive amount and a currency", ErrInvalidTrace)
	}
	return s.tracer.expect(e.Order, e.Amount, e.Currency)
}

// forgetExpected drops the amount index (a Reset); the trace stays.
func (tr *tracer) forgetExpected() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.amounts = map[string]string{}
}
