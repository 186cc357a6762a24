package faults

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// Gateway installs a fault rule on the gateway simulator: requests that
// match misbehave like Kind until Heal removes the rule (or Times firings
// have happened). The firings themselves are visible in the ledger (a
// charge-then-* fault commits a charge) and in the simulator's events; the
// history records the rule's lifetime.
type Gateway struct {
	Kind    gatewaysim.FaultKind
	Match   gatewaysim.Match
	Latency time.Duration // Slow's delay; on other kinds a delay before the effect
	Times   int           // firings before the rule is spent; 0 = unlimited

	mu sync.Mutex
	id string // the simulator's fault id once installed
}

// Name is "gateway:<kind>", the kind as its file registered it (the
// simulator's latency rule is "slow", so it is not mistaken for the
// network latency toxic).
func (f *Gateway) Name() string {
	if r, ok := gatewayRules[f.Kind]; ok {
		return "gateway:" + r.kind
	}
	return "gateway:" + string(f.Kind)
}

// Class is the class its kind's file registered (Disturbs for a rule no
// file registered, which the simulator refuses anyway).
func (f *Gateway) Class() history.Class {
	if r, ok := gatewayRules[f.Kind]; ok {
		return r.class
	}
	return history.Disturbs
}

// Scope is history.Payment for a rule aimed at one order, and
// history.Environment for one that matches every order.
func (f *Gateway) Scope() history.Scope {
	if f.Match.OrderID != "" {
		return history.Payment
	}
	return history.Environment
}

// Target is "gateway".
func (f *Gateway) Target() string { return "gateway" }

// Order is the order the rule is aimed at ("" for any).
func (f *Gateway) Order() string { return f.Match.OrderID }

// Params records the match and the rule's limits.
func (f *Gateway) Params() map[string]string {
	p := map[string]string{}
	put := func(k, v string, set bool) {
		if set {
			p[k] = v
		}
	}
	put("nth", strconv.Itoa(f.Match.Nth), f.Match.Nth != 0)
	put("probability", strconv.FormatFloat(f.Match.Probability, 'g', -1, 64), f.Match.Probability != 0)
	put("latency", f.Latency.String(), f.Latency != 0)
	put("times", strconv.Itoa(f.Times), f.Times != 0)
	return p
}

func (f *Gateway) fault() gatewaysim.Fault {
	return gatewaysim.Fault{Kind: f.Kind, Match: f.Match, Latency: f.Latency, Times: f.Times}
}

// RuleID is the simulator's id of the installed rule ("" before Inject):
// a gateway fault is armed when injected and fires later, if ever.
func (f *Gateway) RuleID() string { return f.installed() }

func (f *Gateway) installed() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.id
}

// Inject validates and installs the rule.
func (f *Gateway) Inject(_ context.Context, env Env) error {
	gf := f.fault()
	if err := gf.Validate(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.id != "" {
		return errors.New("already injected as " + f.id)
	}
	id, err := env.GatewayController().AddFault(gf)
	if err != nil {
		return err
	}
	f.id = id
	return nil
}

// Heal removes the rule and releases the responses it is holding: a
// healed gateway withholds nothing.
func (f *Gateway) Heal(ctx context.Context, env Env) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.id == "" {
		return ErrNotInjected
	}
	ctl := env.GatewayController()
	if err := ctl.RemoveFault(f.id); err != nil {
		return err
	}
	err := releaseHolds(ctx, ctl, func(h gatewaysim.Hold) bool { return h.FaultID == f.id })
	f.id = ""
	return err
}

// releaseHolds releases the holds for which pick is true. A hold released
// by someone else meanwhile is not an error.
func releaseHolds(ctx context.Context, ctl gatewaysim.Controller, pick func(gatewaysim.Hold) bool) error {
	holds, err := ctl.Holds(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range holds {
		if !pick(h) {
			continue
		}
		if err := ctl.Release(h.ID); err != nil && !errors.Is(err, gatewaysim.ErrUnknownHold) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

var gatewayParams = []string{"order", "nth", "probability", "times", "latency"}

// gatewayRule is a gateway fault kind: the kind a spec names, the rule it
// arms on the simulator and its class.
type gatewayRule struct {
	kind  string
	class history.Class
}

// gatewayRules holds every gateway fault kind by the rule it arms; each
// kind's own file registers it (registerGateway).
var gatewayRules = map[gatewaysim.FaultKind]gatewayRule{}

// registerGateway adds a gateway fault kind: spec kind kind ("slow"),
// recorded as "gateway:<kind>", arming rule on the simulator, of class
// class. Its spec takes gatewayParams; latency is required when the rule
// is the simulator's latency.
func registerGateway(kind string, rule gatewaysim.FaultKind, class history.Class) {
	gatewayRules[rule] = gatewayRule{kind, class}
	register(kind, builder{"gateway", gatewayParams, func(r *reader) Fault {
		return &Gateway{Kind: rule, Latency: r.duration("latency", rule == gatewaysim.Latency), Times: int(r.integer("times", false)),
			Match: gatewaysim.Match{OrderID: r.str("order", false), Nth: int(r.integer("nth", false)), Probability: r.float("probability", 0, 1)}}
	}})
}
