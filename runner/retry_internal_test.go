package runner

import (
	"context"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// gatedRunner starts the test server (one replica; the gateway without
// idempotency) under pol and returns a Runner on it that plays examples
// through a Gate.
func gatedRunner(t *testing.T, pol target.Policy, runID string) *Runner {
	t.Helper()
	tg := harnesstest.Target(t, false, nil)
	tg.Policy = pol
	opts := harness.Options{Replicas: 1, Gateway: gatewaysim.Config{NoIdempotency: true}}
	env, tg := harnesstest.StartPrepared(t, tg, opts)
	r := New(Config{Env: env, Target: tg, RunID: runID, Gate: NewGate()})
	t.Cleanup(r.Close)
	return r
}

// TestRetry_TimeHeldAtTheGateMovesTheDeadline: a converging retry held at
// the gate while another example disrupts the environment still gets its
// tries after the gate opens (measured in container mode: wave finals
// held up to 1.4s (p90 0.9s) of their 5s slack, so a passing 503 there would have
// had no second try). The held time is the subject here, so the test
// holds the gate for it.
func TestRetry_TimeHeldAtTheGateMovesTheDeadline(t *testing.T) {
	r := gatedRunner(t, target.Policy{TTL: time.Hour}, "gate")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p := r.newPlay(scenarios.Scenario{Name: "held", Family: "crash-window"})
	defer p.client.Close()
	if err := play(ctx, p, scenarios.Step{Fault: &scenarios.Fault{ID: "stuck", Kind: "gateway:fail_before_charge", Order: "o1"}}); err != nil {
		t.Fatal(err)
	}
	defer p.cleanup(ctx)
	req, _, err := p.request(scenarios.Send{Key: "k1", Order: "o1", Tenant: -1, Purpose: "retry-after-recovery"})
	if err != nil {
		t.Fatal(err)
	}

	disruptor := &execution{}
	if err := r.cfg.Gate.disrupt(ctx, disruptor); err != nil {
		t.Fatal(err)
	}
	const hold = 2 * time.Second
	deadline := time.Now().Add(hold / 2) // passes while the gate is shut
	done := make(chan history.Op, 1)
	go func() { done <- p.retry(ctx, req, deadline) }()
	p.sleepUntil(ctx, time.Now().Add(hold)) // another example's disruption lasting hold
	r.cfg.Gate.restore(disruptor)
	var last history.Op
	select {
	case last = <-done:
	case <-ctx.Done():
		t.Fatal("retry did not return")
	}
	tries := len(p.rec.Snapshot(false).Ops)
	if tries < 2 || last.Outcome != history.Info {
		t.Errorf("%d tries (last %s %d): want the retry to keep trying after the gate opened, its deadline moved by the time held", tries, last.Outcome, last.Status)
	}
}

// TestRetry_SlowAnswerSentBeforeQuietIsTriedAgain: a converging try sent
// while the environment was still recovering whose indeterminate answer
// (here the client's timeout) came back past the deadline is tried once
// more once the environment is quiet: its answer says nothing about
// convergence, and without the second try the checker could only call
// the key undecided (M6 UNKNOWN).
func TestRetry_SlowAnswerSentBeforeQuietIsTriedAgain(t *testing.T) {
	pol := target.Policy{TTL: time.Hour, RecoveryWindow: 300 * time.Millisecond, MaxWait: 100 * time.Millisecond}
	r := gatedRunner(t, pol, "slow")
	r.cfg.Timeout = pol.ConvergeSlack() + 500*time.Millisecond // longer than the window and its slack
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p := r.newPlay(scenarios.Scenario{Name: "slow", Family: "key-reuse"})
	defer p.client.Close()
	if err := play(ctx, p, scenarios.Step{Fault: &scenarios.Fault{ID: "slow", Kind: "gateway:slow", Order: "o1", Params: map[string]string{"latency": "1m"}}}); err != nil {
		t.Fatal(err)
	}
	defer p.cleanup(ctx)
	req, _, err := p.request(scenarios.Send{Key: "k1", Order: "o1", Tenant: -1, Purpose: "retry-until-definitive"})
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.healed = time.Now() // another example's fault healed just now
	p.mu.Unlock()
	quiet := p.rec.At(p.quietAt())
	p.retry(ctx, req, time.Now())
	ops := p.rec.Snapshot(false).Ops
	var after int
	for _, op := range ops {
		if op.Invoke >= quiet {
			after++
		}
	}
	if len(ops) < 2 || after == 0 {
		t.Errorf("%d tries, %d of them sent once quiet: want the slow try sent before quiet tried again after", len(ops), after)
	}
}
