package checker

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/history"
)

// opInfo is one op with what the checker derived about it.
type opInfo struct {
	*history.Op // the history's own op: the checker never writes to it
	// Outcome and ChargeID stand for the op's own (they are read as
	// o.Outcome and o.ChargeID): its outcome as judged (judgedOutcome)
	// and the ledger charge its answer names (indexOps).
	Outcome  history.Outcome
	ChargeID string
	pos      int       // its place in the history's ops
	key      string    // the key a server reads (quotes removed)
	keyed    bool      // the request carried a valid key
	canon    string    // RFC 8785 body
	ep       *epoch    // nil for a request without a valid key
	equal    bool      // body canonically equal to ep's reference body
	made     []*charge // ledger charges (any status) this request triggered
	// edge is true for a request sent within the undecided band around its
	// epoch's promise end (see markEdges).
	edge bool
	// carried is true for a request the server answered from its key's
	// previous epoch, kept past the promise (see carry).
	carried bool
}

// definitive reports whether the client got an answer it acts on.
func (o *opInfo) definitive() bool { return o.Outcome == history.OK || o.Outcome == history.Fail }

// lineage is everything sent under one (tenant, key): the porcupine-style
// partition that every per-key check works on.
type lineage struct {
	tenant, key string
	ops         []*opInfo // by invocation
	epochs      []*epoch
}

// epoch is the stretch of a lineage during which the target promised to
// remember the key: from its first request to first + max(TTL, retry
// window). A request sent after that may meet a server that forgot the key,
// so it opens a new epoch with its own reference body. With no TTL declared
// the promise never ends and a lineage has a single epoch.
type epoch struct {
	lin     *lineage
	seq     int
	start   time.Duration
	ref     *opInfo   // the request whose body the server took as the key's body
	ops     []*opInfo // by invocation
	eq      []*opInfo // the ops carrying the reference body, by invocation
	charges []*charge // succeeded charges this epoch's requests triggered
}

// equalOps returns the requests of e that carried the reference body (or
// a canonically equal one): the retries of one payment.
func (e *epoch) equalOps() []*opInfo { return e.eq }

// charge is one ledger charge and the request that triggered it.
type charge struct {
	history.Charge // a copy: the checker never writes to the history
	// trigger is the request during which the charge was made; nil when no
	// request of its order had been sent yet.
	trigger *opInfo
	// inFlight is false when the charge was made after every request of its
	// order had completed: a server finishing after the client gave up, or a
	// sweeper. It is attributed to the latest earlier request and noted.
	inFlight bool
}

// epoch returns the lineage epoch the charge belongs to, or nil when its
// trigger carried no valid key (or there is no trigger).
func (c *charge) epoch() *epoch {
	if c.trigger == nil {
		return nil
	}
	return c.trigger.ep
}

// order is the other partition: every request and charge for one order id.
type order struct {
	id      string
	ops     []*opInfo // by invocation, across tenants and keys
	charges []*charge // ledger time order
}

// succeeded returns the charges of o that moved money.
func (o *order) succeeded() []*charge {
	var out []*charge
	for _, c := range o.charges {
		if c.Succeeded() {
			out = append(out, c)
		}
	}
	return out
}

// index is a history partitioned for judging. It is built once; every check
// reads it and none changes it.
type index struct {
	h        *history.History
	pol      history.Policy
	promise  time.Duration // max(TTL, retry window); 0 means forever
	bandw    time.Duration // half-width of the undecided band around a promise's end
	ops      []*opInfo     // by invocation, then id
	lineages []*lineage    // by tenant, then key
	eps      []*epoch      // every epoch, in lineage order
	keyless  []*opInfo     // requests without a valid key, by invocation
	orders   []*order      // by id
	byOrder  map[string]*order
	charges  map[string]*charge
	ledger   []*charge       // every ledger charge, one per id, by time then id
	faults   []history.Fault // disruptive faults only, foreign ones included
	own      []history.Fault // the faults the example injected itself (not Foreign)
	crashes  []history.Fault // its own crash-class faults that fired
	skewed   bool            // a fault measured a skew (skewIn is 0 without)
	cov      Coverage
}

// build partitions h. It does no I/O and reads no clock.
func build(h *history.History) *index {
	ix := &index{h: h, pol: h.Policy, byOrder: map[string]*order{}, charges: make(map[string]*charge, len(h.Charges))}
	if h.Policy.TTL > 0 {
		ix.promise = h.Policy.Promise()
	}
	ix.bandw = ix.band()
	ix.skewed = slices.ContainsFunc(h.Faults, func(f history.Fault) bool { return f.Skew != 0 })
	ix.indexOps(canonicalizer{}, history.ChargeIDsOf(h.Charges))
	ix.indexLineages()
	for _, l := range ix.lineages {
		ix.eps = append(ix.eps, l.epochs...)
	}
	ix.indexOrders()
	ix.indexCharges()
	ix.faults = disruptive(h.Faults)
	ix.own = own(h.Faults)
	ix.crashes = crashes(ix.own)
	ix.cov = ix.coverage()
	return ix
}

// indexOps wraps every op (the checker never writes to the history) with
// its server-side key and canonical body, reclassifies its outcome (see
// judgedOutcome), and resolves the id its answer names to the ledger
// charge (an answer naming a PaymentIntent names the charge its
// confirmation made), so every check judges that one money movement
// whichever of its ids the server chose to show.
func (ix *index) indexOps(canon canonicalizer, ids history.ChargeIDs) {
	infos := make([]opInfo, len(ix.h.Ops))
	// byInvoke's order, sorted on copies of what it compares: no pointer
	// followed per comparison.
	type place struct {
		invoke  time.Duration
		id, pos int
	}
	places := make([]place, len(infos))
	for i := range ix.h.Ops {
		op := &ix.h.Ops[i]
		key, ok := serverKey(op)
		infos[i] = opInfo{Op: op, pos: i, Outcome: judgedOutcome(op), ChargeID: ids.Resolve(op.ChargeID), key: key, keyed: ok, canon: canon.of(op)}
		places[i] = place{op.Invoke, op.ID, i}
	}
	slices.SortFunc(places, func(a, b place) int {
		if a.invoke != b.invoke {
			return cmp.Compare(a.invoke, b.invoke)
		}
		if a.id != b.id {
			return cmp.Compare(a.id, b.id)
		}
		return cmp.Compare(a.pos, b.pos)
	})
	ix.ops = make([]*opInfo, len(infos))
	for i, p := range places {
		ix.ops[i] = &infos[p.pos]
	}
}

// judgedOutcome is the outcome the checker judges an op by. A history
// recorded before retryable 4xx answers (408, 409, 423, 425, 429) and
// failures carrying Retry-After were indeterminate holds them as "fail";
// the checker re-reads the status so that such a history is judged by the
// protocol as it stands, never held to a definitive answer the server did
// not give. Only a recorded failure is reclassified: a transport error, or
// a 2xx whose body could not be read, stays what the client recorded.
func judgedOutcome(op *history.Op) history.Outcome {
	if op.Outcome == history.Fail && op.Status != 0 {
		return history.ClassifyAnswer(op.Status, op.RetryAfter)
	}
	return op.Outcome
}

// byInvoke orders ops by invocation, then id, then place in the history:
// a total order, so an unstable sort is as good as a stable one.
func byInvoke(a, b *opInfo) int {
	if c := cmp.Compare(a.Invoke, b.Invoke); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.pos, b.pos))
}

func (ix *index) indexLineages() {
	type tk struct{ tenant, key string }
	byKey := map[tk]*lineage{}
	for _, o := range ix.ops {
		if !o.keyed {
			ix.keyless = append(ix.keyless, o)
			continue
		}
		k := tk{o.Tenant, o.key}
		l := byKey[k]
		if l == nil {
			l = &lineage{tenant: o.Tenant, key: o.key}
			byKey[k] = l
			ix.lineages = append(ix.lineages, l)
		}
		l.ops = append(l.ops, o)
	}
	slices.SortFunc(ix.lineages, func(a, b *lineage) int {
		return cmp.Or(strings.Compare(a.tenant, b.tenant), strings.Compare(a.key, b.key))
	})
	for _, l := range ix.lineages {
		ix.splitEpochs(l)
		ix.markEdges(l)
	}
}

// splitEpochs cuts l where a request was sent after the current epoch's
// promise ran out (strictly after: a retry at exactly the promise is still
// covered).
//
// An epoch's ops are a stretch of l.ops, and its equal ops all of them
// when every one carried the reference body (the usual case): both share
// l.ops' array, capped so that an append cannot write into it.
func (ix *index) splitEpochs(l *lineage) {
	var cur *epoch
	from := 0
	for i, o := range l.ops {
		if cur == nil || (ix.promise > 0 && o.Invoke-cur.start > ix.promise) {
			if cur != nil {
				cur.ops = l.ops[from:i:i]
			}
			cur, from = &epoch{lin: l, seq: len(l.epochs), start: o.Invoke}, i
			l.epochs = append(l.epochs, cur)
		}
		o.ep = cur
	}
	if cur != nil {
		cur.ops = l.ops[from:len(l.ops):len(l.ops)]
	}
	for i, e := range l.epochs {
		if i > 0 {
			carry(l.epochs[i-1], e)
		}
		e.ref = reference(stillBound(e))
		n := 0
		for _, o := range e.ops {
			o.equal = o.canon == e.ref.canon
			if o.equal && !o.carried {
				n++
			}
		}
		if n == len(e.ops) {
			e.eq = e.ops
			continue
		}
		e.eq = make([]*opInfo, 0, n)
		for _, o := range e.ops {
			if o.equal && !o.carried {
				e.eq = append(e.eq, o)
			}
		}
	}
}

// stillBound is the requests of e from which its reference body is
// picked. A later epoch opens because the server may have forgotten the
// key, not because it must, and its first request may be any of the
// workload's: a body the server refuses as invalid (400, before it looks
// at the key) or, still keeping the key, as different from the one it
// holds (422). Those refusals bind nothing, so the epoch's reference is
// picked from its first request not refused that way (all of them when
// every one was): a server that kept the key, refused a different body
// past the promise and replayed the original body's charge to a retry,
// or that forgot the key, refused an invalid body and then charged a
// valid one anew, is not judged as if the refused body were the key's.
//
// A request the server answered from the key's previous epoch (carried,
// see carry) binds nothing in this one either.
func stillBound(e *epoch) []*opInfo {
	if e.seq == 0 {
		return e.ops
	}
	ops := e.ops
	if slices.ContainsFunc(ops, func(o *opInfo) bool { return o.carried }) {
		ops = slices.DeleteFunc(slices.Clone(ops), func(o *opInfo) bool { return o.carried })
	}
	for i, o := range ops {
		if o.Outcome != history.Fail || (o.Status != 400 && o.Status != 422) {
			return ops[i:]
		}
	}
	return ops
}

// reference picks the request whose body the server took as the key's
// body: the first one sent. When requests with different bodies were sent
// before the first one completed, the server may have seen any of them
// first; the body it accepted (a 2xx, else a definitive failure other than
// 422) is taken as the one it saw first, so a race the workload started is
// not held against the server.
func reference(ops []*opInfo) *opInfo {
	first := ops[0]
	racing := ops[:1]
	for _, o := range ops[1:] {
		if o.Invoke > first.Complete {
			break
		}
		racing = append(racing, o)
	}
	if !mixedBodies(racing) {
		return first
	}
	for _, o := range racing {
		if o.Outcome == history.OK {
			return o
		}
	}
	for _, o := range racing {
		if o.Outcome == history.Fail && o.Status != 422 {
			return o
		}
	}
	return first
}

func mixedBodies(ops []*opInfo) bool {
	for _, o := range ops[1:] {
		if o.canon != ops[0].canon {
			return true
		}
	}
	return false
}

func (ix *index) indexOrders() {
	for _, o := range ix.ops {
		ord := ix.byOrder[o.Order]
		if ord == nil {
			ord = &order{id: o.Order}
			ix.byOrder[o.Order] = ord
			ix.orders = append(ix.orders, ord)
		}
		ord.ops = append(ord.ops, o)
	}
	slices.SortFunc(ix.orders, func(a, b *order) int { return strings.Compare(a.id, b.id) })
}

// indexCharges attaches every ledger charge to its order and its trigger.
// Charges for orders that no request of this history carried are A1's to
// judge (accounting); the other checks never see them.
func (ix *index) indexCharges() {
	ledger := ix.dedupCharges()
	slices.SortStableFunc(ledger, func(a, b *charge) int {
		return cmp.Or(cmp.Compare(a.At, b.At), strings.Compare(a.ID, b.ID))
	})
	ix.ledger = ledger
	for _, c := range ledger {
		ord := ix.byOrder[c.Order]
		if ord == nil {
			continue
		}
		ord.charges = append(ord.charges, c)
		c.trigger, c.inFlight = attribute(ord, &c.Charge, ix.slack())
		ix.link(c)
	}
}

// dedupCharges returns one charge per ledger id. A ledger that records
// events may list one charge more than once (created, then settled); a
// double charge needs two ids, so records sharing an id are one charge,
// made at the earliest time recorded, in the state of the last record.
func (ix *index) dedupCharges() []*charge {
	ledger := make([]*charge, 0, len(ix.h.Charges))
	slab := make([]charge, len(ix.h.Charges)) // one allocation for them all
	for i, rec := range ix.h.Charges {
		c := ix.charges[rec.ID]
		if c == nil {
			c = &slab[i]
			c.Charge = rec
			ix.charges[rec.ID] = c
			ledger = append(ledger, c)
			continue
		}
		at := min(c.At, rec.At)
		c.Charge = rec
		c.At = at
	}
	return ledger
}

func (ix *index) link(c *charge) {
	if c.trigger == nil {
		return
	}
	c.trigger.made = append(c.trigger.made, c)
	if e := c.epoch(); e != nil && c.Succeeded() {
		e.charges = append(e.charges, c)
	}
}

// attributionSlack is how far the checker trusts the ledger's clock
// against the recorder's: a charge stamped up to this much before a
// request was sent or after it completed may still be that request's. The
// gateway stamps charges on its own clock (in container mode, read back
// from JSON), so a few milliseconds of offset are normal; without slack a
// 4 ms offset moved a charge onto the next request and failed P1 and M3.
// A measured History.ClockOffset widens it.
const attributionSlack = 50 * time.Millisecond

// slack is the attribution tolerance for this history.
func (ix *index) slack() time.Duration { return attributionSlack + abs(ix.h.ClockOffset) }

// attribute finds the request that triggered charge c among the requests
// of its order: one in flight when the charge was made, give or take tol.
// It prefers, in turn, the request whose own non-replayed answer named the
// charge, one whose replayed answer named it, one strictly in flight by
// the ledger's clock, and the earliest sent (the owner of a key whose
// duplicates wait on it). With none in flight it is the latest request
// sent before the charge; with none sent before, no request triggered it.
func attribute(ord *order, c *history.Charge, tol time.Duration) (*opInfo, bool) {
	var best, latest *opInfo
	bestScore := -1
	for _, o := range ord.ops {
		if o.Invoke > c.At+tol {
			break
		}
		latest = o
		if o.Complete+tol < c.At {
			continue
		}
		s := 2 * claim(o, c)
		if o.Invoke <= c.At && c.At <= o.Complete {
			s++
		}
		if s > bestScore {
			best, bestScore = o, s
		}
	}
	if best != nil {
		return best, true
	}
	return latest, false
}

// claim scores how strongly o's own answer ties it to charge c.
func claim(o *opInfo, c *history.Charge) int {
	switch {
	case o.ChargeID != c.ID:
		return 0
	case o.Replayed:
		return 1
	default:
		return 2
	}
}

// disruptive drops faults that make nothing indeterminate: a business
// outcome (history.Business, a scripted decline) is a definitive answer,
// not a disturbance; a clock or zone in force (history.Skews) disturbs
// nothing either (its relaunches are faults of their own), and widens
// the band and the recovery window instead (skewIn).
func disruptive(fs []history.Fault) []history.Fault {
	var out []history.Fault
	for _, f := range fs {
		if c := f.ClassOf(); c != history.Business && c != history.Skews {
			out = append(out, f)
		}
	}
	return out
}

// quiet reports whether o was sent when every disruptive fault injected
// before it completed had healed and the target's recovery window had
// passed since: the only requests M6 and R3 hold to a definitive answer.
func (ix *index) quiet(o *opInfo) bool {
	for _, f := range ix.faults {
		if f.Inject > o.Complete {
			continue
		}
		if !f.Healed || ix.recovered(f.Heal, o.Invoke) > o.Invoke {
			return false
		}
	}
	return true
}

// recovered is when a server that began recovering at heal is held to
// have recovered: a recovery window later, stretched by the clock skew in
// force on any replica from heal until by (a server whose leases follow
// a clock behind its peers' takes a dead owner's key over that much
// later).
func (ix *index) recovered(heal, by time.Duration) time.Duration {
	return heal + ix.pol.RecoveryWindow + ix.skewIn("", heal, by)
}

// quietAt is when every fault injected by t has healed and the recovery
// window has passed (see quiet); it ignores faults that never healed.
// Asked at a promise's end, it tells whether the key's retries after
// recovery could fall inside the promise at all.
func (ix *index) quietAt(t time.Duration) time.Duration {
	var at time.Duration
	for _, f := range ix.faults {
		if f.Inject <= t && f.Healed {
			at = max(at, ix.recovered(f.Heal, f.Heal+ix.pol.RecoveryWindow))
		}
	}
	return at
}

// faultsDuring returns the ids of disruptive faults active at some point in
// [from, to].
func (ix *index) faultsDuring(from, to time.Duration) []int {
	var ids []int
	for _, f := range ix.faults {
		if f.Inject <= to && (!f.Healed || f.Heal >= from) {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// unhealed returns the ids of disruptive faults injected by t that never healed.
func (ix *index) unhealed(t time.Duration) []int {
	var ids []int
	for _, f := range ix.faults {
		if f.Inject <= t && !f.Healed {
			ids = append(ids, f.ID)
		}
	}
	return ids
}
