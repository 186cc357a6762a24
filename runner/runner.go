package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/ledger"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// Config is what a Runner plays with, fixed when New makes it: nothing
// sets it afterwards, so every example of a run reads the same.
type Config struct {
	Env     harness.Env
	Target  *target.Target
	Log     *slog.Logger
	Timeout time.Duration // per request; default max_wait + 15s
	WaitMax time.Duration // bound of a wait step without its own timeout; default 30s
	RunID   string        // prefix of every real key and order; make it unique per process

	// StopEarly, when set, is asked before each late-retry probe with the
	// example's history so far (every request answered, no fault active,
	// the ledger caught up): true ends the example there, since the
	// probes still to come cannot undo what it holds. The Runner records
	// and never judges; the judgement is handed in (checker.MovedMoneyWrongly).
	StopEarly func(*history.History) bool

	// StopProbing, when set, is when a run's examples must have sent
	// their last request: a late-retry probe whose wait would end after
	// it is not sent, and the example ends there with what it played
	// (every request answered: it is judged as any other). A family
	// starts no example that would end past its deadline, but the gate
	// and crash waves' recoveries stretch the ones in flight. Cut
	// counts such examples, by family.
	StopProbing time.Time

	// HardEnd, when set, is when an example still in flight is cut: its
	// requests held at the gate are never sent, its waits and retries
	// end, its faults are healed, and Run returns ErrCut without judging
	// it or handing it to the ledger (its history holds requests that were
	// never answered, which is no evidence against the server; the charges
	// of its orders are attributed, not judged). The gate's holds are
	// otherwise unbounded: a send held while another example's crash wave
	// recovered, or a relaunch waiting for that recovery, kept a run going
	// 40s past its budget. Cut counts such examples, by family.
	HardEnd time.Time

	// Gate keeps one example's disruptions away from the others' requests
	// when examples run at once; nil for a runner that plays one at a time.
	// The certification owns it; the Runner only passes through it.
	Gate *Gate

	// Gateway is how the environment's gateway keeps idempotency keys,
	// recorded in every history (zero: not said).
	Gateway history.Gateway
}

// Runner plays scenarios against one environment. Each Run uses fresh
// keys and orders, so nothing is reset between examples; only what a
// fault broke is repaired: one environment serves many examples.
// One ledger feed follows the gateway for the Runner's whole life:
// examples read their charges from it after a barrier, and Reconcile
// holds every charge the gateway made against every example. Close it.
type Runner struct {
	cfg   Config
	state *runState
	// byAmount says the target's trace is amount (trace.go), read once
	// from the configuration rather than parsed again on every send.
	byAmount bool
}

// runState is what a run's examples share while they play: the ledger,
// the examples in flight and the faults they share, the counts of cut
// examples. Each field names what guards it.
type runState struct {
	ledgerOnce sync.Once
	ledger     *ledger.Ledger // set once (ledgerOnce)

	mu       sync.Mutex
	examples int                   // examples started (mu)
	live     map[*execution]bool   // examples in flight (mu; live.go)
	shared   map[*sharedFault]bool // faults beyond one payment active now (mu)
	cut      map[string]Cuts       // examples ended early, by family (mu)

	paid atomic.Int64 // payments priced under an amount trace (trace.go)
}

// New makes a Runner on cfg, which it keeps as it is.
func New(cfg Config) *Runner {
	r := &Runner{cfg: cfg, state: &runState{live: map[*execution]bool{}, shared: map[*sharedFault]bool{}, cut: map[string]Cuts{}}}
	if cfg.Target != nil {
		rule, ok := cfg.Target.Protocol.TraceRule()
		r.byAmount = ok && rule.Amount
	}
	return r
}

// Config is the configuration the Runner was made with.
func (r *Runner) Config() Config { return r.cfg }

// ErrCut is Run's error for an example cut at the runner's HardEnd.
var ErrCut = errors.New("cut at the run's hard end: not judged")

// Run plays sc and returns its history. An error means the scenario could
// not be played to its end (a wait timed out, a replica would not
// restart, the ledger feed could not catch up): its history is still
// returned, marked incomplete, and judging it can only find violations,
// never prove their absence. ErrCut means it is not to be judged at all.
func (r *Runner) Run(ctx context.Context, sc scenarios.Scenario) (*history.History, error) {
	caller := ctx
	if !r.cfg.HardEnd.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, r.cfg.HardEnd)
		defer cancel()
	}
	p := r.newPlay(sc)
	defer p.client.Close()
	r.enter(p)
	defer r.exit(p)
	defer p.releaseKeys() // once its evidence is in
	var err error
	if r.cfg.Gate != nil && recovers(sc) {
		err = r.cfg.Gate.holdRecovery(ctx, p)
		defer r.cfg.Gate.endRecovery(p) // once its payments have converged
	}
	if err == nil {
		err = p.steps(ctx)
	}
	if cerr := p.cleanup(ctx); err == nil {
		err = cerr
	}
	if r.cfg.Gate != nil {
		r.cfg.Gate.restore(p) // after a failed step, only once cleanup has healed
	}
	if err == nil && ended(ctx) == nil {
		p.converge(ctx)
	}
	if err == nil {
		err = p.keepFailed()
	}
	if ended(ctx) != nil && ended(caller) == nil {
		r.count(sc.Family, func(c *Cuts) { c.HardEnd++ })
		return p.rec.Snapshot(false), ErrCut
	}
	return p.evidence(ctx, err)
}

// Cuts counts one family's examples that the run's end cut short.
type Cuts struct {
	Probing int // ended before a probe past StopProbing, and judged
	HardEnd int // still in flight at HardEnd: cut there, not judged
}

func (r *Runner) count(family string, add func(*Cuts)) {
	r.state.mu.Lock()
	defer r.state.mu.Unlock()
	c := r.state.cut[family]
	add(&c)
	r.state.cut[family] = c
}

// Cut counts the examples of family that StopProbing or HardEnd cut.
func (r *Runner) Cut(family string) Cuts {
	r.state.mu.Lock()
	defer r.state.mu.Unlock()
	return r.state.cut[family]
}

// Ledger is the Runner's account of money, started on first use: the
// gateway's event feed, from which examples read their charges after a
// barrier, and which example sent each order.
func (r *Runner) Ledger() *ledger.Ledger {
	r.state.ledgerOnce.Do(func() { r.state.ledger = ledger.NewLedger(r.cfg.Env.GatewayController()) })
	return r.state.ledger
}

// Close stops the ledger's feed.
func (r *Runner) Close() {
	r.state.ledgerOnce.Do(func() {})
	if r.state.ledger != nil {
		r.state.ledger.Close()
	}
}

func (r *Runner) nonce() string {
	r.state.mu.Lock()
	defer r.state.mu.Unlock()
	r.state.examples++
	return fmt.Sprintf("%s%d", r.cfg.RunID, r.state.examples)
}

func (r *Runner) log() *slog.Logger {
	if r.cfg.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.cfg.Log
}
