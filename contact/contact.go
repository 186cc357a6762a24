// Package contact is first contact with a server under test: a handful
// of requests and a look at the gateway's ledger, before any family
// starts (inside certify) or alone (`idemcheck doctor`). It finds where
// the server names the order on its gateway calls (the trace money is
// followed by) and tells, in seconds, what a target file gets wrong,
// with the lines that fix it. A run that cannot trace money or reach the
// gateway stops here: a misconfiguration is never reported as a FAILED
// check.
//
// The requests, in order: one charge, its replay, the same key with
// another amount, a payment the gateway declines, and a request without
// a key. Each uses keys and orders of its own, which no example reuses.
package contact

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/client"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/target"
)

// requestTimeout bounds one first-contact request: longer than a
// duplicate's wait and a gateway call, short enough that a server that
// never answers is named within the doctor's 20 seconds.
const requestTimeout = 6 * time.Second

// ledgerWait bounds how long a charge may take to show in the ledger
// after its answer (a server that charges from an outbox).
const ledgerWait = 2 * time.Second

// First contact's payments have amounts in [firstAmountMin,
// firstAmountMin+firstAmountSpan+payments), below the amounts a run's
// examples get under an amount trace (target.UniqueAmountFloor), so that
// neither is attributed to the other's order.
const (
	firstAmountMin  = 2000
	firstAmountSpan = 7000
	payments        = 5
)

// Contact is one first contact in progress.
type Contact struct {
	tg     *target.Target
	ctl    gatewaysim.Controller
	client *client.Client
	nonce  string
	amount int64 // the first payment's; the others' follow it
	trace  gatewaysim.Trace
	rep    *reports.Contact
}

// Run makes first contact with the server env runs for tg; ready is how
// long it took to start. It never fails: what went wrong is an item of
// the checklist.
func Run(ctx context.Context, tg *target.Target, env harness.Env, ready time.Duration) *reports.Contact {
	start := time.Now()
	c := newContact(tg, env)
	defer c.client.Close()
	c.rep.Items = append(c.rep.Items, reports.ContactItem{Check: "started and ready", OK: true,
		Detail: fmt.Sprintf("%d replicas in %s", env.Replicas(), ready.Round(100*time.Millisecond))})
	c.play(ctx)
	c.rep.Took = reports.Duration(time.Since(start))
	return c.rep
}

func newContact(tg *target.Target, env harness.Env) *Contact {
	rec := history.NewRecorder(history.History{Target: tg.Name, Family: "first-contact"})
	urls := make([]string, env.Replicas())
	for i := range urls {
		urls[i] = env.ReplicaURL(i)
	}
	n, _ := rand.Int(rand.Reader, big.NewInt(firstAmountSpan))
	b := make([]byte, 4)
	rand.Read(b)
	return &Contact{tg: tg, ctl: env.GatewayController(), client: client.New(tg.Protocol, rec, urls, requestTimeout),
		nonce: hex.EncodeToString(b), amount: firstAmountMin + n.Int64(), rep: &reports.Contact{}}
}

// payment is one first-contact payment: its order, key and amount.
type payment struct {
	order, key string
	amount     int64
}

// pay is the i-th payment: its own order and key, and an amount no
// other payment of the run has (the run's start at UniqueAmountFloor).
func (c *Contact) pay(i int) payment {
	return payment{order: fmt.Sprintf("ord_contact_%s_%d", c.nonce, i), key: c.tg.Protocol.Key(fmt.Sprintf("contact-%s-%d", c.nonce, i)), amount: c.amount + int64(i)}
}

func (c *Contact) request(p payment) client.Request {
	return client.Request{Replica: 0, Tenant: c.tg.Tenants[0], Key: p.key, Order: p.order, Amount: p.amount, Currency: "usd", Purpose: "first-contact"}
}

func (c *Contact) add(it reports.ContactItem) { c.rep.Items = append(c.rep.Items, it) }

// play sends the requests and fills the checklist; it stops at the first
// item that blocks the others.
func (c *Contact) play(ctx context.Context) {
	first := c.pay(0)
	before, err := c.ctl.Ledger(ctx)
	if err != nil {
		c.add(reports.ContactItem{Check: "the gateway's ledger read", Detail: err.Error(), Blocks: true})
		return
	}
	op, body := c.client.DoBody(ctx, c.request(first))
	ch, ok := c.reached(ctx, op, first, len(before))
	if !ok || !c.traced(ctx, ch, first) {
		return
	}
	c.answered(op, body, ch, first)
	c.replayed(ctx, first, op)
	c.otherBody(ctx, first)
	c.declined(ctx)
	c.missingKey(ctx)
}

// reached finds the first payment's charge in the ledger: the first
// entry after skip with its amount and currency.
func (c *Contact) reached(ctx context.Context, op history.Op, p payment, skip int) (gatewaysim.Charge, bool) {
	item := reports.ContactItem{Check: "the charge reached the gateway"}
	deadline := time.Now().Add(ledgerWait)
	for {
		all, err := c.ctl.Ledger(ctx)
		if err != nil {
			item.Detail, item.Blocks = "the gateway's ledger could not be read: "+err.Error(), true
			c.add(item)
			return gatewaysim.Charge{}, false
		}
		all = all[min(skip, len(all)):]
		if i := slices.IndexFunc(all, func(ch gatewaysim.Charge) bool { return ch.Amount == p.amount && ch.Currency == "usd" }); i >= 0 {
			item.OK, item.Detail = true, "through Stripe's "+apiOf(all[i])+" API"
			c.rep.API = apiOf(all[i])
			c.add(item)
			return all[i], true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			c.add(c.notReached(item, op, p, all))
			return gatewaysim.Charge{}, false
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func apiOf(ch gatewaysim.Charge) string {
	if ch.PaymentIntent != "" {
		return "payment_intents"
	}
	return "charges"
}

// notReached says why no charge of the payment's amount came, and how
// to fix it.
func (c *Contact) notReached(item reports.ContactItem, op history.Op, p payment, seen []gatewaysim.Charge) reports.ContactItem {
	item.Blocks = true
	item.Detail = fmt.Sprintf("%s answered %s; the gateway received no charge of %d usd", c.tg.Protocol.Path, answer(op), p.amount)
	if len(seen) > 0 {
		item.Detail += fmt.Sprintf(" (it received %d other charges, the first of %d %s: does the server change the amount?)", len(seen), seen[0].Amount, seen[0].Currency)
		item.Fix = []string{"send the amount the client asked for, in minor units, to the gateway"}
		return item
	}
	switch {
	case op.Status == 0:
		item.Fix = []string{"the server did not answer within " + requestTimeout.String() + ": look at its log (replica0.log)"}
	case op.Status >= 400 && op.Status < 500:
		item.Fix = []string{"the request shape may not be the server's: protocol.path, protocol.encoding, protocol.body and protocol.auth_header (docs/targets.md)"}
	default:
		item.Fix = []string{"the server must charge through the gateway idemcheck hands it, by the variables its start.env sets:",
			"start:\n  env:\n    GATEWAY_URL: \"{{.GatewayURL}}\"          # the name your server reads\n    GATEWAY_API_KEY: \"{{.GatewayAPIKey}}\""}
	}
	return item
}

// traced finds where the charge names the order (or checks the
// declared trace against it) and sets it at the gateway.
func (c *Contact) traced(ctx context.Context, ch gatewaysim.Charge, p payment) bool {
	item := reports.ContactItem{Check: "money traced", Blocks: true}
	found := gatewaysim.FindTrace(ch, p.order)
	declared, ok := c.tg.Protocol.TraceRule()
	c.trace = found
	if ok {
		c.trace = declared
		if !declared.Amount && declared.OrderOf(ch) != p.order {
			item.Detail = fmt.Sprintf("protocol.trace is %s, but the charge for %s names it %s", declared, p.order, where(found))
			item.Fix = []string{"protocol:\n  trace: \"" + found.String() + "\""}
			c.add(item)
			return false
		}
	}
	err := c.ctl.SetTrace(ctx, c.trace)
	if err == nil && c.trace.Amount {
		err = c.expect(ctx, p)
	}
	if err != nil {
		item.Detail = "the gateway refused the trace: " + err.Error()
		c.add(item)
		return false
	}
	c.rep.Trace, c.rep.TraceFound = c.trace.String(), !ok
	item.OK, item.Blocks = true, false
	item.Detail = "by " + where(c.trace)
	if !ok && c.trace != gatewaysim.DefaultTrace {
		item.Detail += " (found; to say so in the file: protocol.trace: \"" + c.trace.String() + "\")"
	}
	c.add(item)
	return true
}

// where says in words where a trace finds the order.
func where(t gatewaysim.Trace) string {
	switch {
	case t.Amount:
		return "amount and currency: the gateway call names no order, so every payment of the run gets an amount of its own"
	case t.Description != "":
		return fmt.Sprintf("the description %q", t.Description)
	}
	return t.String()
}

// answered checks the first answer's judged fields against the charge.
func (c *Contact) answered(op history.Op, body []byte, ch gatewaysim.Charge, p payment) {
	item := reports.ContactItem{Check: "the success answer's fields found"}
	if op.Outcome != history.OK {
		item.Detail = fmt.Sprintf("the charge moved money but was answered %s", answer(op))
		item.Fix = []string{"a charge the gateway made is answered 2xx with its id, amount and currency"}
		c.add(item)
		return
	}
	f := c.tg.Protocol.Fields
	var missing, wrong, fix []string
	field := func(name, pointer, got, want string, required bool, is func(any) bool) {
		switch {
		case got == "" && required:
			missing = append(missing, fmt.Sprintf("%s (at %s)", name, pointer))
			at := pointerTo(body, is)
			if at == "" {
				at = "/where/your/answer/keeps/it   # a name or a JSON pointer"
			} else {
				at += "   # where this answer has it"
			}
			fix = append(fix, fmt.Sprintf("protocol:\n  fields:\n    %s: %s", fieldKey(name), at))
		case got == "":
		case want != "" && got != want:
			wrong = append(wrong, fmt.Sprintf("%s %q at %s, the gateway's %q", name, got, pointer, want))
		}
	}
	field("id", f.ID, op.ChargeID, "", true, isText(ch.ID, cmp.Or(ch.PaymentIntent, ch.ID)))
	field("amount", f.Amount, nonZero(op.RespAmount), fmt.Sprint(p.amount), true, isNumber(fmt.Sprint(p.amount)))
	field("currency", f.Currency, strings.ToLower(op.RespCurrency), "usd", true, isText("usd"))
	field("order", f.OrderID, op.RespOrder, p.order, false, isText(p.order))
	field("status", f.Status, op.RespStatus, "", false, isText("succeeded"))
	if op.ChargeID != "" && op.ChargeID != ch.ID && op.ChargeID != ch.PaymentIntent {
		wrong = append(wrong, fmt.Sprintf("id %q at %s names no charge the gateway made (it made %s)", op.ChargeID, f.ID, ch.ID))
	}
	switch {
	case len(missing) > 0:
		item.Detail, item.Fix, item.Blocks = "missing: "+strings.Join(missing, ", "), fix, true
		if op.Error != "" {
			item.Detail += "; " + op.Error
		}
	case len(wrong) > 0:
		item.Detail = strings.Join(wrong, "; ") + " (certify judges it: M2)"
	default:
		item.OK = true
		item.Detail = "id, amount, currency" + optional(op.RespOrder != "", ", order") + optional(op.RespStatus != "", ", status")
	}
	c.add(item)
}

func fieldKey(name string) string {
	if name == "order" {
		return "order_id"
	}
	return name
}

func nonZero(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func optional(on bool, s string) string {
	if on {
		return s
	}
	return ""
}

// replayed sends the first request again: the same charge, marked.
func (c *Contact) replayed(ctx context.Context, p payment, first history.Op) {
	op := c.client.Do(ctx, c.request(p))
	item := reports.ContactItem{Check: "the replay named the same charge"}
	switch {
	case op.Outcome == history.OK && op.ChargeID == first.ChargeID:
		item.OK, item.Detail = true, answer(op)
	default:
		item.Detail = fmt.Sprintf("answered %s after %s (certify judges it: M1, M4)", answer(op), answer(first))
	}
	c.add(item)
	marker := reports.ContactItem{Check: "the replay marker", OK: op.Replayed, Detail: c.tg.Protocol.ReplayHeader + ": true"}
	if !op.Replayed {
		marker.Detail = "no " + c.tg.Protocol.ReplayHeader + ": true on the replay (INFORMATIONAL only)"
		marker.Fix = []string{"protocol:\n  replay_header: Your-Replay-Header   # if your server marks replays another way"}
	}
	c.add(marker)
}

// otherBody sends the first key with another amount: it must be refused.
func (c *Contact) otherBody(ctx context.Context, p payment) {
	other := p
	other.amount = c.pay(4).amount
	if c.trace.Amount {
		if err := c.expect(ctx, other); err != nil {
			c.add(reports.ContactItem{Check: "the other body refused", Detail: err.Error()})
			return
		}
	}
	op := c.client.Do(ctx, c.request(other))
	item := reports.ContactItem{Check: "the other body refused", Detail: answer(op)}
	switch {
	case op.Status == http.StatusUnprocessableEntity:
		item.OK = true
	case op.Outcome == history.Fail:
		item.OK, item.Detail = true, answer(op)+" (422 is what the draft asks: R2 NON-STRICT)"
	default:
		item.Detail += " to the same key with another amount (certify judges it: P1)"
	}
	c.add(item)
}

// declined sends a payment the gateway declines.
func (c *Contact) declined(ctx context.Context) {
	p := c.pay(1)
	item := reports.ContactItem{Check: "the decline answered"}
	if c.trace.Amount {
		if err := c.expect(ctx, p); err != nil {
			item.Detail = err.Error()
			c.add(item)
			return
		}
	}
	id, err := c.ctl.AddFault(gatewaysim.Fault{Kind: gatewaysim.Decline, Match: gatewaysim.Match{OrderID: p.order}, Times: 1})
	if err != nil {
		item.Detail = "the gateway refused the decline rule: " + err.Error()
		c.add(item)
		return
	}
	defer c.ctl.RemoveFault(id)
	op := c.client.Do(ctx, c.request(p))
	item.Detail = answer(op)
	switch {
	case op.Status == http.StatusPaymentRequired:
		item.OK = true
	case op.Outcome == history.Fail:
		item.OK = true
	case op.Outcome == history.OK:
		item.Detail += ": a success for a declined card (certify judges it: M2)"
	default:
		item.Detail += ": a decline is definitive, a 4xx such as 402"
	}
	c.add(item)
	c.secondTraced(ctx, p)
}

// secondTraced checks that the trace found on the first payment also
// attributes the second's ledger entry: a description pattern with more
// in it than the order (a timestamp) would not.
func (c *Contact) secondTraced(ctx context.Context, p payment) {
	all, err := c.ctl.Ledger(ctx)
	if err != nil {
		return
	}
	for _, ch := range all {
		if ch.Amount == p.amount && ch.Currency == "usd" && ch.OrderID != p.order {
			c.add(reports.ContactItem{Check: "money traced on a second payment", Blocks: true,
				Detail: fmt.Sprintf("%s found on the first payment, but the second's charge does not name %s that way (metadata %v, description %q)", c.trace, p.order, ch.Metadata, ch.Description),
				Fix:    []string{"protocol:\n  trace: amount   # or where your server names the order"}})
			return
		}
	}
}

// missingKey sends a request without the key header: 400.
func (c *Contact) missingKey(ctx context.Context) {
	p := c.pay(2)
	if c.trace.Amount {
		if err := c.expect(ctx, p); err != nil {
			return
		}
	}
	req := c.request(p)
	req.NoKey = true
	op := c.client.Do(ctx, req)
	item := reports.ContactItem{Check: "a missing key refused", Detail: answer(op)}
	if op.Status == http.StatusBadRequest {
		item.OK = true
	} else {
		item.Detail += " without " + c.tg.Protocol.KeyHeader + " (certify judges it: R1)"
		item.Fix = []string{"protocol:\n  key_header: Your-Key-Header   # if your server reads the key from another header"}
	}
	c.add(item)
}

// expect tells the gateway which order p's amount pays for, under an
// amount trace.
func (c *Contact) expect(ctx context.Context, p payment) error {
	return c.ctl.Expect(ctx, gatewaysim.Expectation{Order: p.order, Amount: p.amount, Currency: "usd"})
}

// answer renders an op's answer: "201 ch_…", "422", "no answer (…)".
func answer(op history.Op) string {
	switch {
	case op.Status == 0:
		return "no answer (" + op.Error + ")"
	case op.ChargeID != "":
		return fmt.Sprintf("%d %s", op.Status, op.ChargeID)
	}
	return fmt.Sprint(op.Status)
}
