package checker_test

import (
	"fmt"
	"time"

	"github.com/idemcheck/idemcheck/history"
)

// ms is a millisecond on the history's clock.
const ms = time.Millisecond

// policy is the policy of every built history unless a test changes it.
var policy = history.Policy{TTL: 10 * time.Second, RetryWindow: 20 * time.Second, RecoveryWindow: 2 * time.Second, MaxWait: time.Second}

// builder writes small histories in Go for tests that need one variation
// of a golden file rather than a new file.
type builder struct{ h history.History }

func newBuilder() *builder {
	return &builder{h: history.History{Version: history.Version, Target: "test", Policy: policy, Complete: true}}
}

func bodyOf(order string, amount int64, currency string) string {
	return fmt.Sprintf(`{"amount":%d,"currency":%q,"order_id":%q}`, amount, currency, order)
}

// op appends a request of tenant/key for order, sent at inv and answered
// at done with status; charge is the id a 2xx names.
func (b *builder) op(tenant, key, order string, inv, done time.Duration, status int, charge string) *history.Op {
	op := history.Op{
		ID: len(b.h.Ops), Tenant: tenant, Key: key, KeyHeader: key, Order: order, Amount: 1250, Currency: "usd",
		Body: bodyOf(order, 1250, "usd"), Invoke: inv, Complete: done, Outcome: history.Classify(status), Status: status,
	}
	if op.Outcome == history.OK {
		op.ChargeID, op.RespAmount, op.RespCurrency, op.RespOrder, op.RespStatus = charge, 1250, "usd", order, "succeeded"
	}
	b.h.Ops = append(b.h.Ops, op)
	return &b.h.Ops[len(b.h.Ops)-1]
}

// replay appends a 2xx replay of charge.
func (b *builder) replay(tenant, key, order string, inv, done time.Duration, charge string) *history.Op {
	op := b.op(tenant, key, order, inv, done, 201, charge)
	op.Replayed = true
	return op
}

// charge appends a ledger charge.
func (b *builder) charge(id, order string, at time.Duration, status string) {
	b.h.Charges = append(b.h.Charges, history.Charge{ID: id, Order: order, Amount: 1250, Currency: "usd", Status: status, At: at})
}

// fault appends a disruptive fault; heal < 0 means never healed.
func (b *builder) fault(name string, inject, heal time.Duration) {
	f := history.Fault{ID: len(b.h.Faults), Name: name, Target: "replica0", Inject: inject}
	if heal >= 0 {
		f.Heal, f.Healed = heal, true
	}
	b.h.Faults = append(b.h.Faults, f)
}

func (b *builder) history() *history.History { return &b.h }
