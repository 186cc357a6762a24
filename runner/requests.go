package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/client"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

func (p *execution) send(ctx context.Context, s scenarios.Send) error {
	if err := p.priceUniquely(ctx, &s); err != nil {
		return err
	}
	req, w, err := p.request(s)
	if err != nil {
		return err
	}
	orders := []string{req.Order}
	if o := p.bodyOrder(req.Body); o != "" {
		orders = append(orders, o) // a mutated body may name another order
	}
	for _, o := range orders {
		p.own(o)
	}
	if req.Key != "" {
		p.mu.Lock()
		p.last[sentAs(req.Tenant, req.Key, w.Method, w.Path, string(w.Body))] = req
		k := req.Tenant + "\x00" + req.Key
		p.converging[k] = p.converging[k] || s.Converge
		p.mu.Unlock()
	}
	do := p.do
	switch {
	case s.Converge:
		deadline := p.convergeDeadline()
		do = func(ctx context.Context, req client.Request) history.Op { return p.retry(ctx, req, deadline) }
	case s.RetryWithin > 0:
		by := p.started().Add(time.Duration(s.RetryWithin * float64(p.r.cfg.Target.Policy.TTL)))
		do = func(ctx context.Context, req client.Request) history.Op { return p.retryWithin(ctx, req, by) }
	}
	if !s.Async {
		do(ctx, req)
		p.answer(s.ID)
		return nil
	}
	ch := make(chan history.Op, 1)
	p.pending[s.ID] = ch
	go func() { ch <- do(ctx, req) }()
	return nil
}

// request builds s's request, and it as it goes on the wire.
func (p *execution) request(s scenarios.Send) (client.Request, target.Request, error) {
	s.Defaults()
	if s.Replica >= p.r.cfg.Env.Replicas() {
		return client.Request{}, target.Request{}, fmt.Errorf("replica %d: the environment has %d", s.Replica, p.r.cfg.Env.Replicas())
	}
	tenants := p.r.cfg.Target.Tenants
	if s.Tenant >= len(tenants) {
		return client.Request{}, target.Request{}, fmt.Errorf("tenant %d: the target has %d", s.Tenant, len(tenants))
	}
	req := client.Request{Client: s.Client, Replica: s.Replica, Key: p.realKey(s.Key), Order: p.realOrder(s.Order), OrderSym: s.Order,
		Amount: s.Amount, Currency: s.Currency, Purpose: s.Purpose, Writing: target.Writing{Style: s.Writing, Edit: s.Edit}}
	if s.Key == "" {
		req.Key = ""
	}
	if s.Tenant >= 0 {
		req.Tenant = tenants[s.Tenant]
	}
	if s.Body != "" {
		req.Body = []byte(strings.ReplaceAll(s.Body, "{{order}}", req.Order))
	}
	applyKeyForm(&req, s.KeyForm)
	// A writing or edit the target's body does not have is the
	// scenario's mistake: refused here, before anything is recorded.
	w, err := p.client.Wire(req)
	if err != nil {
		return client.Request{}, target.Request{}, fmt.Errorf("send %s: %w", s.ID, err)
	}
	return req, w, nil
}

func (p *execution) bodyOrder(body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	o, _ := m[p.r.cfg.Target.Protocol.Fields.OrderID].(string)
	return o
}

// applyKeyForm shapes the key header as the scenario asks.
func applyKeyForm(req *client.Request, form string) {
	var h string
	switch form {
	case "":
		return
	case "missing":
		req.NoKey = true
		return
	case "quoted":
		h = `"` + req.Key + `"`
	case "empty":
		h, req.Key = "", "" // an empty Key tells the checker the header was empty on purpose
	case "long":
		h = req.Key + strings.Repeat("x", 256)
	case "bad-quoted":
		h = `"` + req.Key
	case "control":
		h = req.Key + " with spaces"
	}
	req.KeyHeader = &h
}

// do sends one request through the gate.
func (p *execution) do(ctx context.Context, req client.Request) history.Op {
	op, _ := p.doGated(ctx, req)
	return op
}

// doGated is do, also saying how long the request was held at the gate
// (another example's disruption in progress) before it was sent.
func (p *execution) doGated(ctx context.Context, req client.Request) (history.Op, time.Duration) {
	var held time.Duration
	if g := p.r.cfg.Gate; g != nil {
		t := time.Now()
		if err := g.enter(ctx, p); err != nil {
			return history.Op{Error: err.Error()}, time.Since(t)
		}
		held = time.Since(t)
		defer g.leave(p)
	}
	p.mu.Lock()
	if p.start.IsZero() {
		p.start = time.Now() // TTL waits count from the first request sent, after any wait at the gate
	}
	p.mu.Unlock()
	op := p.client.Do(ctx, req)
	if op.Outcome == history.Info {
		p.keepKeys() // its outcome unknown to the client: the server may recover it
	}
	return op, held
}

// RealOrder and RealKey map symbolic names to this example's identities.
func (p *execution) realOrder(sym string) string { return p.orderPrefix() + sym }

func (p *execution) realKey(sym string) string {
	k := p.nonce + "-" + sym
	if p.r.cfg.Target == nil {
		return k
	}
	return p.r.cfg.Target.Protocol.Key(k)
}
