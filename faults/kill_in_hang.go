package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// KillInHang is the crash window made precise: it waits for the gateway's
// hold event for orderID (a ChargeThenHang rule must be installed and a
// request for the order sent to replica), SIGKILLs the replica while the
// gateway holds the committed charge, and only then releases the hold. The
// replica dies knowing nothing of a charge that exists: exactly the state
// an idempotency layer must recover from. The kill is recorded (with the
// hold and order); the returned HealFunc restarts the replica.
//
// It matches any hold for orderID since the simulator's last reset, so use
// a fresh order id per attempt, as every scenario does. Bound the wait
// with ctx.
func KillInHang(ctx context.Context, env Env, replica int, orderID string) (HealFunc, error) {
	hold, err := waitHold(ctx, env.GatewayController(), 0, func(ev gatewaysim.Event) bool { return ev.OrderID == orderID })
	if err != nil {
		return nil, fmt.Errorf("inject kill in hang of %s: %w", orderID, err)
	}
	return killInHold(ctx, env, replica, hold)
}

// waitHold waits for the first hold after event since that match accepts.
func waitHold(ctx context.Context, ctl gatewaysim.Controller, since int64, match func(gatewaysim.Event) bool) (gatewaysim.Event, error) {
	events, cancel := ctl.SubscribeSince(since)
	defer cancel()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return gatewaysim.Event{}, gatewaysim.ErrClosed
			}
			if ev.Type == gatewaysim.EventHold && match(ev) {
				return ev, nil
			}
		case <-ctx.Done():
			return gatewaysim.Event{}, fmt.Errorf("wait for a hold: %w", ctx.Err())
		}
	}
}

// killInHold kills the replica (recorded) and then releases the hold.
func killInHold(ctx context.Context, env Env, replica int, hold gatewaysim.Event) (HealFunc, error) {
	heal, err := Apply(ctx, env, &Kill{Replica: replica, Hold: hold.HoldID, OrderID: hold.OrderID})
	relErr := env.GatewayController().Release(hold.HoldID)
	if errors.Is(relErr, gatewaysim.ErrUnknownHold) {
		relErr = nil
	}
	if err != nil {
		return nil, errors.Join(err, relErr)
	}
	return heal, relErr
}

// CrashInHang is KillInHang as a declarative fault, for scenario and
// incident files ("kill_in_hang:replica0:order=ord_7f3a"). Inject installs
// a one-shot ChargeThenHang rule for the order and arms a watcher; when the
// gateway holds the order's charge the watcher kills the replica (recorded
// as its own "kill" fault, at the instant it happens) and releases the
// hold. Heal disarms the watcher, removes the rule and restarts the
// replica if it was killed. The workload must send the order's request to
// Replica.
type CrashInHang struct {
	Replica int
	OrderID string

	mu      sync.Mutex
	hang    *Gateway
	cancel  context.CancelFunc
	done    chan struct{}
	healKil HealFunc
	err     error
}

// Name is "kill_in_hang".
func (f *CrashInHang) Name() string { return "kill_in_hang" }

// Class is history.Crash: the replica dies knowing nothing of a charge that exists.
func (f *CrashInHang) Class() history.Class { return history.Crash }

// Scope is history.Replica: it kills the replica, which serves every example, not only the held order.
func (f *CrashInHang) Scope() history.Scope { return history.Replica }

// Target is "replicaN".
func (f *CrashInHang) Target() string { return replicaName(f.Replica) }

// Order is the order whose charge is held.
func (f *CrashInHang) Order() string { return f.OrderID }

// Inject installs the hang rule and arms the watcher; it does not wait for
// the request.
func (f *CrashInHang) Inject(ctx context.Context, env Env) error {
	if f.OrderID == "" {
		return errors.New("kill_in_hang needs an order id")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hang != nil {
		return errors.New("already injected")
	}
	since, err := env.GatewayController().LastSeq(ctx)
	if err != nil {
		return err
	}
	hang := &Gateway{Kind: gatewaysim.ChargeThenHang, Match: gatewaysim.Match{OrderID: f.OrderID}, Times: 1}
	if err := hang.Inject(ctx, env); err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.hang, f.cancel, f.done = hang, cancel, make(chan struct{})
	go f.watch(wctx, env, since, hang.installed())
	return nil
}

// watch kills the replica inside the rule's hold.
func (f *CrashInHang) watch(ctx context.Context, env Env, since int64, faultID string) {
	defer close(f.done)
	hold, err := waitHold(ctx, env.GatewayController(), since, func(ev gatewaysim.Event) bool { return ev.FaultID == faultID })
	if err != nil {
		return // disarmed by Heal before the request came
	}
	heal, err := killInHold(ctx, env, f.Replica, hold)
	f.mu.Lock()
	f.healKil, f.err = heal, err
	f.mu.Unlock()
}

// Heal disarms the watcher, removes the rule (releasing a hold it still
// has) and restarts the replica if the watcher killed it.
func (f *CrashInHang) Heal(ctx context.Context, env Env) error {
	f.mu.Lock()
	hang, cancel, done := f.hang, f.cancel, f.done
	f.mu.Unlock()
	if hang == nil {
		return ErrNotInjected
	}
	cancel()
	<-done
	f.mu.Lock()
	defer f.mu.Unlock()
	errs := []error{f.err, hang.Heal(ctx, env)}
	if f.healKil != nil {
		errs = append(errs, f.healKil(ctx))
	}
	f.hang, f.healKil, f.err = nil, nil, nil
	return errors.Join(errs...)
}

func init() {
	register("kill_in_hang", builder{"replica", []string{"order"}, func(r *reader) Fault { return &CrashInHang{Replica: r.replica, OrderID: r.str("order", true)} }})
}
