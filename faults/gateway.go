package faults

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
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

// Decline declines matching charges (402, stored and replayed).
func Decline(m gatewaysim.Match) *Gateway { return &Gateway{Kind: gatewaysim.Decline, Match: m} }

// FailBeforeCharge answers matching requests with a 500 before any money
// moves; nothing is stored, so a re-send is processed afresh.
func FailBeforeCharge(m gatewaysim.Match) *Gateway {
	return &Gateway{Kind: gatewaysim.FailBeforeCharge, Match: m}
}

// ChargeThenFail commits the charge and answers 500: money moved, the
// caller was told it did not.
func ChargeThenFail(m gatewaysim.Match) *Gateway {
	return &Gateway{Kind: gatewaysim.ChargeThenFail, Match: m}
}

// ChargeThenDrop commits the charge and drops the connection unanswered.
func ChargeThenDrop(m gatewaysim.Match) *Gateway {
	return &Gateway{Kind: gatewaysim.ChargeThenDrop, Match: m}
}

// ChargeThenHang commits the charge and withholds the answer until the
// hold is released (Heal releases this rule's holds): the crash window.
func ChargeThenHang(m gatewaysim.Match) *Gateway {
	return &Gateway{Kind: gatewaysim.ChargeThenHang, Match: m}
}

// Slow delays matching requests by d before the gateway decides, with the
// key in flight meanwhile.
func Slow(m gatewaysim.Match, d time.Duration) *Gateway {
	return &Gateway{Kind: gatewaysim.Latency, Match: m, Latency: d}
}

// Name is "gateway:<kind>", with the simulator's latency kind called
// "slow" so it is not mistaken for the network latency toxic.
func (f *Gateway) Name() string {
	if f.Kind == gatewaysim.Latency {
		return "gateway:slow"
	}
	return "gateway:" + string(f.Kind)
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
	put("fault_id", f.installed(), f.installed() != "")
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

// gatewayKinds maps spec kinds to simulator fault kinds; "slow" is the
// simulator's latency.
var gatewayKinds = map[string]gatewaysim.FaultKind{
	"decline": gatewaysim.Decline, "fail_before_charge": gatewaysim.FailBeforeCharge,
	"charge_then_fail": gatewaysim.ChargeThenFail, "charge_then_drop": gatewaysim.ChargeThenDrop,
	"charge_then_hang": gatewaysim.ChargeThenHang, "slow": gatewaysim.Latency,
}

func init() {
	for name, kind := range gatewayKinds {
		register(name, builder{"gateway", gatewayParams, func(r *reader) Fault {
			return &Gateway{Kind: kind, Latency: r.duration("latency", kind == gatewaysim.Latency), Times: int(r.integer("times", false)),
				Match: gatewaysim.Match{OrderID: r.str("order", false), Nth: int(r.integer("nth", false)), Probability: r.float("probability", 0, 1)}}
		}})
	}
}
