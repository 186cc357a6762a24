package runner

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemcheck/idemcheck/client"
	"github.com/idemcheck/idemcheck/faults"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/ledger"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// Runner plays scenarios against one environment. Each Run uses fresh
// keys and orders, so nothing is reset between examples; only what a
// fault broke is repaired: one environment serves many examples.
// One ledger feed follows the gateway for the Runner's whole life:
// examples read their charges from it after a barrier, and Reconcile
// holds the gateway's full ledger against every example. Close it.
type Runner struct {
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
	// 40s past its budget (redis-store, 91.6s at --budget 50s). Cut
	// counts such examples, by family.
	HardEnd time.Time

	// Gate keeps one example's disruptions away from the others' requests
	// when examples run at once; nil for a runner that plays one at a time.
	Gate *Gate

	// Gateway is how the environment's gateway keeps idempotency keys,
	// recorded in every history (zero: not said).
	Gateway history.Gateway

	ledgerOnce sync.Once
	ledger     *ledger.Ledger
	mu         sync.Mutex
	examples   int
	live       map[*execution]bool   // examples in flight (live.go)
	shared     map[*sharedFault]bool // environment-wide faults active now
	cut        map[string]Cuts       // examples ended early, by family
	paid       atomic.Int64          // payments priced under an amount trace (trace.go)

}

// ErrCut is Run's error for an example cut at the runner's HardEnd.
var ErrCut = errors.New("cut at the run's hard end: not judged")

// Run plays sc and returns its history. An error means the scenario could
// not be played to its end (a wait timed out, a replica would not
// restart, the ledger feed could not catch up): its history is still
// returned, marked incomplete, and judging it can only find violations,
// never prove their absence. ErrCut means it is not to be judged at all.
func (r *Runner) Run(ctx context.Context, sc scenarios.Scenario) (*history.History, error) {
	caller := ctx
	if !r.HardEnd.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, r.HardEnd)
		defer cancel()
	}
	p := r.newPlay(sc)
	defer p.client.Close()
	r.enter(p)
	defer r.exit(p)
	var err error
	if r.Gate != nil && recovers(sc) {
		err = r.Gate.holdRecovery(ctx, p)
		defer r.Gate.endRecovery(p) // once its payments have converged
	}
	if err == nil {
		err = p.steps(ctx)
	}
	if cerr := p.cleanup(ctx); err == nil {
		err = cerr
	}
	if r.Gate != nil {
		r.Gate.restore(p) // after a failed step, only once cleanup has healed
	}
	if err == nil && ended(ctx) == nil {
		p.converge(ctx)
	}
	if ended(ctx) != nil && ended(caller) == nil {
		r.count(sc.Family, func(c *Cuts) { c.HardEnd++ })
		return p.rec.Snapshot(false), ErrCut
	}
	return p.evidence(ctx, err)
}

// pastStop says whether waiting w would end after StopProbing.
func (p *execution) pastStop(w scenarios.Wait) bool {
	return !p.r.StopProbing.IsZero() && p.ttlWaitEnd(w).After(p.r.StopProbing)
}

// Cuts counts one family's examples that the run's end cut short.
type Cuts struct {
	Probing int // ended before a probe past StopProbing, and judged
	HardEnd int // still in flight at HardEnd: cut there, not judged
}

func (r *Runner) count(family string, add func(*Cuts)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cut == nil {
		r.cut = map[string]Cuts{}
	}
	c := r.cut[family]
	add(&c)
	r.cut[family] = c
}

// Cut counts the examples of family that StopProbing or HardEnd cut.
func (r *Runner) Cut(family string) Cuts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cut[family]
}

// Ledger is the Runner's account of money, started on first use: the
// gateway's event feed, from which examples read their charges after a
// barrier, and which example sent each order.
func (r *Runner) Ledger() *ledger.Ledger {
	r.ledgerOnce.Do(func() { r.ledger = ledger.NewLedger(r.Env.GatewayController()) })
	return r.ledger
}

// Close stops the ledger's feed.
func (r *Runner) Close() {
	r.ledgerOnce.Do(func() {})
	if r.ledger != nil {
		r.ledger.Close()
	}
}

func (r *Runner) nonce() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.examples++
	return fmt.Sprintf("%s%d", r.RunID, r.examples)
}

func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// execution is one scenario being played: its state from the first step
// to its history.
type execution struct {
	r       *Runner
	sc      scenarios.Scenario
	nonce   string
	rec     *history.Recorder
	env     faults.Env // the environment, recording into rec (through labels)
	labels  *labeller
	client  *client.Client
	mu      sync.Mutex
	orders  map[string]bool           // real order ids this example sent
	last    map[string]client.Request // the latest request of each (tenant, key)
	pending map[string]chan history.Op
	plan    []stepFault       // the fault each step injects or heals, built before the first step
	faults  map[string]active // active faults by scenario id ("kill:replica0" for process steps)
	start   time.Time         // when the first request was sent (mu)
	// healed is when the last fault this example lived through healed,
	// its own or a foreign one (a restarted replica ready again), and
	// foreignActive counts the foreign faults not healed yet (mu): its
	// recovery window counts from then (quietFrom).
	healed        time.Time
	foreignActive int
	// skew is the largest clock skew p lived through (mu): its recovery
	// windows stretch by it (livedSkew).
	skew time.Duration
	// recovering is when the recovery window of a Wait{Recovery} began
	// (zero before one): converging sends retry until it plus the window
	// and the policy's ConvergeSlack.
	recovering time.Time
	// converging are the (tenant, key)s a converging send retried to its
	// deadline already: converge does not give them a second deadline.
	converging map[string]bool
	// seen counts, per real order, the ledger events already taken into
	// the recorder, so that evidence can be gathered more than once.
	seen     map[string]int
	included map[string]bool // charge ids in the recorder
	// priced is each payment's amount under an amount trace, by its
	// order, amount and currency as the scenario wrote them (mu).
	priced map[string]int64
}

func (r *Runner) newPlay(sc scenarios.Scenario) *execution {
	pol := r.Target.Policy
	r.Ledger()
	rec := history.NewRecorder(history.History{
		Target: r.Target.Name, Family: sc.Family, Seed: sc.Seed, Replicas: r.Env.Replicas(),
		Tenants: r.Target.Tenants, Stores: r.Target.StoreNames(), Policy: pol, Gateway: r.Gateway,
	})
	urls := make([]string, r.Env.Replicas())
	for i := range urls {
		urls[i] = r.Env.ReplicaURL(i)
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = pol.MaxWait + 15*time.Second
	}
	labels := &labeller{rec: rec, shared: map[int]func(){}}
	p := &execution{
		r: r, sc: sc, nonce: r.nonce(), rec: rec, env: faults.Bind(r.Env, labels, r.log()), labels: labels,
		client: client.New(r.Target.Protocol, rec, urls, timeout),
		orders: map[string]bool{}, last: map[string]client.Request{}, priced: map[string]int64{},
		pending: map[string]chan history.Op{}, faults: map[string]active{},
		converging: map[string]bool{}, seen: map[string]int{}, included: map[string]bool{},
	}
	labels.share = func(f history.Fault) func() { return r.share(p, f) }
	p.plan = p.planFaults()
	return p
}

func (p *execution) steps(ctx context.Context) error {
	last, disrupts := disruptive(p.plan)
	if disrupts && p.r.Gate != nil {
		if err := p.r.Gate.disrupt(ctx, p); err != nil {
			return err
		}
	}
	for i, s := range p.sc.Steps {
		if probe := s.Wait != nil && s.Wait.TTL > 0; probe && p.failedSoFar(ctx) {
			break // the probes still to come cannot undo a failure
		} else if probe && p.pastStop(*s.Wait) {
			p.r.count(p.sc.Family, func(c *Cuts) { c.Probing++ })
			break // the run's budget ends before this probe would be sent
		}
		alone := i > last && p.r.Gate != nil && p.plan[i].momentary()
		if alone {
			if err := p.r.Gate.disruptMomentarily(ctx, p); err != nil {
				return fmt.Errorf("step %d (%s): %w", i, s, err)
			}
		}
		if err := p.step(ctx, i, s); err != nil {
			return fmt.Errorf("step %d (%s): %w", i, s, err)
		}
		if (i == last || alone) && p.r.Gate != nil {
			p.r.Gate.restore(p)
		}
	}
	return p.collect(ctx, []string{"*"})
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
	if g := p.r.Gate; g != nil {
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
	return p.client.Do(ctx, req), held
}

// converge ends an example with evidence for convergence (M6): every key
// whose last answer was indeterminate (a 5xx from a replica whose database
// link was cut by another example a moment before, a timeout) is retried,
// once the faults have healed, until it gets a definitive answer or the
// recovery window and its slack pass. Without it a correct server's
// passing 503 would leave convergence undecided. The keys retry at once,
// to one deadline; a key whose converging send already retried to its
// deadline is not given another (no-recovery's waves took a minute more,
// one key after another).
func (p *execution) converge(ctx context.Context) {
	last := map[string]history.Op{}
	for _, op := range p.rec.Snapshot(false).Ops {
		k := op.Tenant + "\x00" + op.Key
		// The answer that came last is what convergence is judged on
		// (a duplicate held until after the others were answered).
		if prev, ok := last[k]; !ok || op.Complete >= prev.Complete {
			last[k] = op
		}
	}
	deadline := p.pastWindow(time.Now())
	var wg sync.WaitGroup
	for k, op := range last {
		p.mu.Lock()
		req, ok := p.last[k]
		done := p.converging[k]
		p.mu.Unlock()
		if ok && !done && op.Outcome == history.Info {
			req.Purpose = "retry-until-definitive"
			wg.Go(func() { p.retry(ctx, req, deadline) })
		}
	}
	wg.Wait()
}

// convergeDeadline is when a converging send stops retrying: the
// recovery window and the policy's ConvergeSlack after the window began
// (the scenario waited it out before sending), or after now when no window
// was waited.
func (p *execution) convergeDeadline() time.Time {
	return p.pastWindow(cmp.Or(p.recovering, time.Now()))
}

// pastWindow is t plus the recovery window and the policy's
// ConvergeSlack: how long after t a converging send keeps retrying.
func (p *execution) pastWindow(t time.Time) time.Time {
	return t.Add(p.recoveryWindow() + p.r.Target.Policy.ConvergeSlack())
}

// recoveryWindow is the policy's, stretched by the largest clock skew p
// lived through (livedSkew).
func (p *execution) recoveryWindow() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.r.Target.Policy.RecoveryWindow + p.skew
}

// retry re-sends req while its answer is indeterminate, backing off
// from 100ms (doubling, at most 1s) or as Retry-After says, until
// deadline; every try is an op of its own in the history. Time a try
// spent held at the gate moves the deadline: the server was not asked
// then (measured in container mode: final retries of a wave held up to
// 1.4s, p90 0.9s, while another example's disruption healed, out of a
// 5s slack). So does a foreign fault healing (settled): the server's
// recovery starts again from there.
//
// A definitive answer to a try sent before the environment was quiet
// (another example's fault still active, or healed less than a recovery
// window before) is not what convergence is judged on: the try is sent
// again once the environment is quiet, up to maxQuietRetries times.
func (p *execution) retry(ctx context.Context, req client.Request, deadline time.Time) history.Op {
	backoff := 100 * time.Millisecond
	requiet := 0
	for {
		sent := time.Now()
		op, held := p.doGated(ctx, req)
		deadline = later(deadline.Add(held), p.settled())
		if ctx.Err() != nil {
			return op
		}
		if op.Outcome != history.Info {
			quiet := p.quietAt()
			if !sent.Before(quiet) || requiet == maxQuietRetries || p.sleepUntil(ctx, quiet) != nil {
				return op
			}
			requiet++
			continue
		}
		wait := backoff
		if s, err := strconv.Atoi(op.RetryAfter); err == nil && s >= 0 {
			wait = time.Duration(s) * time.Second
		}
		if time.Now().Add(wait).After(deadline) {
			return op
		}
		if p.sleepUntil(ctx, time.Now().Add(wait)) != nil {
			return op
		}
		backoff = min(backoff*2, time.Second)
	}
}

func (p *execution) step(ctx context.Context, i int, s scenarios.Step) error {
	if s.Point != "" {
		p.labels.set(map[string]string{history.ParamCrashPoint: s.Point, history.ParamCrashPayment: p.realOrder(s.Payment)})
		defer p.labels.set(nil)
	}
	switch {
	case s.Send != nil:
		return p.send(ctx, *s.Send)
	case s.Wait != nil:
		return p.wait(ctx, *s.Wait)
	case s.Heal != "":
		return p.heal(ctx, s.Heal)
	case s.Release != "":
		return p.release(ctx, s.Release)
	}
	return p.fault(ctx, p.plan[i])
}

// maxQuietRetries bounds how often retry sends a try again because its
// definitive answer came while the environment was still recovering: a
// run whose other examples fault the environment without pause must not
// hold a converging send forever.
const maxQuietRetries = 5

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// RealOrder and RealKey map symbolic names to this example's identities.
func (p *execution) realOrder(sym string) string { return "ord_" + p.nonce + "_" + sym }
func (p *execution) realKey(sym string) string {
	k := p.nonce + "-" + sym
	if p.r.Target != nil && p.r.Target.Protocol.KeyFormat == target.KeyUUID {
		return uuidOf(k)
	}
	return k
}

// uuidOf is a UUID-shaped key (version 8, RFC 9562's custom layout) made
// from the first 122 bits of k's SHA-256: the same symbolic key in the
// same example is the same UUID, and another is another, as the plain key
// would be.
func uuidOf(k string) string {
	h := sha256.Sum256([]byte(k))
	h[6] = h[6]&0x0f | 0x80 // version 8
	h[8] = h[8]&0x3f | 0x80 // RFC 9562 variant
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

func (p *execution) send(ctx context.Context, s scenarios.Send) error {
	if err := p.priceUniquely(ctx, &s); err != nil {
		return err
	}
	req, err := p.request(s)
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
	k := req.Tenant + "\x00" + req.Key
	if req.Key != "" {
		p.mu.Lock()
		p.last[k] = req
		p.converging[k] = p.converging[k] || s.Converge
		p.mu.Unlock()
	}
	do := p.do
	if s.Converge {
		deadline := p.convergeDeadline()
		do = func(ctx context.Context, req client.Request) history.Op { return p.retry(ctx, req, deadline) }
	}
	if !s.Async {
		do(ctx, req)
		return nil
	}
	ch := make(chan history.Op, 1)
	p.pending[s.ID] = ch
	go func() { ch <- do(ctx, req) }()
	return nil
}

func (p *execution) request(s scenarios.Send) (client.Request, error) {
	s.Defaults()
	if s.Replica >= p.r.Env.Replicas() {
		return client.Request{}, fmt.Errorf("replica %d: the environment has %d", s.Replica, p.r.Env.Replicas())
	}
	tenants := p.r.Target.Tenants
	if s.Tenant >= len(tenants) {
		return client.Request{}, fmt.Errorf("tenant %d: the target has %d", s.Tenant, len(tenants))
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
	if _, err := p.client.Wire(req); err != nil {
		return client.Request{}, fmt.Errorf("send %s: %w", s.ID, err)
	}
	return req, nil
}

func (p *execution) bodyOrder(body []byte) string {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	o, _ := m[p.r.Target.Protocol.Fields.OrderID].(string)
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

// fault plays a step that injects a fault: a fault step, or a process
// step (kill, pause, restart, resume), which is a fault on one replica. A
// kill or a pause opens one (recorded when it has taken effect), the
// matching restart or resume heals it; a restart of a running replica is
// a fault of its own, healed at once.
func (p *execution) fault(ctx context.Context, sf stepFault) error {
	switch {
	case sf.err != nil:
		return sf.err
	case sf.f == nil:
		return fmt.Errorf("empty step")
	case sf.heal:
		return p.heal(ctx, sf.id)
	}
	if err := p.apply(ctx, sf.id, sf.f); err != nil {
		return err
	}
	if _, ok := sf.f.(*faults.Restart); ok {
		return p.heal(ctx, sf.id)
	}
	return nil
}

func (p *execution) apply(ctx context.Context, id string, f faults.Fault) error {
	if _, dup := p.faults[id]; dup {
		return fmt.Errorf("fault %s is already active", id)
	}
	heal, err := faults.Apply(ctx, p.env, f)
	if err != nil {
		return err
	}
	p.faults[id] = active{f, heal}
	return nil
}

func (p *execution) heal(ctx context.Context, id string) error {
	a, ok := p.faults[id]
	if !ok {
		return fmt.Errorf("heal %s: no such active fault", id)
	}
	delete(p.faults, id)
	err := a.heal(ctx)
	p.mu.Lock()
	p.healed = time.Now()
	p.mu.Unlock()
	return err
}

// release lets the gateway answer a held charge for a symbolic order; a
// hold that never came is an error, never "release every hold".
func (p *execution) release(ctx context.Context, sym string) error {
	ev, err := p.gatewayEvent(ctx, scenarios.Wait{Timeout: time.Second}, gatewaysim.EventHold, p.realOrder(sym))
	if err != nil {
		return fmt.Errorf("release %s: %w", sym, err)
	}
	return p.r.Env.GatewayController().Release(ev.HoldID)
}

// releaseOwnHolds releases the holds on this example's orders, and only
// those: families play at once on one gateway, and releasing every hold
// would let one example's cleanup answer another's crash wave mid-strike
// (whose own release then finds "unknown hold", and the wave ends
// UNKNOWN).
func (p *execution) releaseOwnHolds(ctx context.Context) error {
	gw := p.r.Env.GatewayController()
	holds, err := gw.Holds(ctx)
	if err != nil {
		return err
	}
	var errs []error
	p.mu.Lock()
	own := maps.Clone(p.orders)
	p.mu.Unlock()
	for _, h := range holds {
		if !own[h.OrderID] {
			continue
		}
		if err := gw.Release(h.ID); err != nil && !errors.Is(err, gatewaysim.ErrUnknownHold) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// cleanup repairs what the scenario broke, so the next example starts on
// a healthy environment: faults healed, holds released, replicas resumed
// and restarted. It always runs, also after a failed step.
func (p *execution) cleanup(ctx context.Context) error {
	var errs []error
	ctx = context.WithoutCancel(ctx)
	if err := p.releaseOwnHolds(ctx); err != nil {
		errs = append(errs, fmt.Errorf("release holds: %w", err))
	}
	// Network and gateway faults first, then paused replicas resumed,
	// then killed ones restarted, so that a restarted replica comes up on
	// healthy links.
	ids := slices.Sorted(maps.Keys(p.faults))
	slices.SortStableFunc(ids, func(a, b string) int { return cleanupRank(p.faults[a].f) - cleanupRank(p.faults[b].f) })
	if p.r.Gate != nil && slices.ContainsFunc(ids, func(id string) bool { return faults.IsMomentary(p.faults[id].f) }) {
		// A momentary fault left active (the steps stopped early) is
		// healed by a relaunch: the others' requests wait for it, and Run
		// restores the gate after cleanup.
		if err := p.r.Gate.disruptMomentarily(ctx, p); err != nil {
			errs = append(errs, err)
		}
	}
	for _, id := range ids {
		if err := p.heal(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	if err := p.collect(ctx, []string{"*"}); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	return nil
}

// cleanupRank orders the heals of the faults left active: faults
// beyond one replica (links, stores, the gateway) and those aimed at one
// payment first, then a replica's state undone (a paused replica
// resumed, a clock put back), then a crashed replica started again, so
// that it comes up on healthy links.
func cleanupRank(f faults.Fault) int {
	switch {
	case f.Scope() != history.Replica:
		return 0
	case f.Class() != history.Crash:
		return 1
	}
	return 2
}

// labeller records faults into an example's history, adding the labels of
// the step that injects them (the crash point and payment it strikes), and
// into the other examples in flight when they are environment-wide
// (share; shared.go).
type labeller struct {
	rec    *history.Recorder
	share  func(history.Fault) (heal func())
	mu     sync.Mutex
	cur    map[string]string
	shared map[int]func() // own fault id -> records its heal in the others
}

func (l *labeller) set(labels map[string]string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur = labels
}

// Inject records f with the current labels.
func (l *labeller) Inject(f history.Fault) int {
	heal := l.share(f)
	l.mu.Lock()
	if len(l.cur) > 0 {
		f.Params = maps.Clone(f.Params)
		if f.Params == nil {
			f.Params = map[string]string{}
		}
		maps.Copy(f.Params, l.cur)
	}
	id := l.rec.Inject(f)
	if heal != nil {
		l.shared[id] = heal
	}
	l.mu.Unlock()
	return id
}

// Heal records a heal, here and in the examples that lived through it.
func (l *labeller) Heal(id int) {
	l.rec.Heal(id)
	l.mu.Lock()
	heal := l.shared[id]
	delete(l.shared, id)
	l.mu.Unlock()
	if heal != nil {
		heal()
	}
}
