package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/client"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/target"
)

// Env is what the runner needs of an environment, processes or
// containers alike.
type Env interface {
	Replicas() int
	ReplicaURL(i int) string
	// GatewayController drives the gateway simulator, wherever it runs.
	GatewayController() gatewaysim.Controller
	Kill(i int) error
	Pause(i int) error
	Resume(i int) error
	Restart(ctx context.Context, i int) error
}

// Injector injects a network or gateway fault and returns its heal. It is
// how the runner reaches the faults package without knowing its types.
type Injector func(ctx context.Context, f Fault, order string) (heal func(context.Context) error, err error)

// Runner plays scenarios against one environment. Each Run uses fresh
// keys, orders and ledger scope, so nothing is reset between examples;
// only what a fault broke is repaired (DESIGN.md §7).
type Runner struct {
	Env      Env
	Target   *target.Target
	Inject   Injector
	Log      *slog.Logger
	Timeout  time.Duration // per request; default max_wait + 15s
	WaitMax  time.Duration // bound of a wait step without its own timeout; default 30s
	RunID    string        // prefix of every real key and order; make it unique per process
	examples int
	mu       sync.Mutex
}

// Run plays sc and returns its history. An error means the scenario could
// not be played (a wait timed out, a replica would not restart): its
// history is still returned, marked incomplete, and judging it can only
// find violations, never prove their absence.
func (r *Runner) Run(ctx context.Context, sc Scenario) (*history.History, error) {
	p := r.newPlay(sc)
	defer p.stop()
	err := p.steps(ctx)
	if cerr := p.cleanup(ctx); err == nil {
		err = cerr
	}
	return p.rec.Snapshot(err == nil), err
}

func (r *Runner) nonce() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.examples++
	return fmt.Sprintf("%s%d", r.RunID, r.examples)
}

// play is one scenario's execution state.
type play struct {
	r       *Runner
	sc      Scenario
	nonce   string
	rec     *history.Recorder
	client  *client.Client
	orders  sync.Map // real order id -> true
	pending map[string]chan history.Op
	faults  map[string]func(context.Context) error
	killed  map[int]bool
	paused  map[int]bool
	unsub   func()
	done    chan struct{}
	start   time.Time
}

func (r *Runner) newPlay(sc Scenario) *play {
	pol := r.Target.Policy
	rec := history.NewRecorder(history.History{
		Target: r.Target.Name, Family: sc.Family, Seed: sc.Seed, Replicas: r.Env.Replicas(),
		Tenants: r.Target.Tenants,
		Policy:  history.Policy{TTL: pol.TTL, RetryWindow: pol.RetryWindow, RecoveryWindow: pol.RecoveryWindow, MaxWait: pol.MaxWait},
	})
	urls := make([]string, r.Env.Replicas())
	for i := range urls {
		urls[i] = r.Env.ReplicaURL(i)
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = pol.MaxWait + 15*time.Second
	}
	p := &play{
		r: r, sc: sc, nonce: r.nonce(), rec: rec,
		client:  client.New(r.Target.Protocol, rec, urls, timeout),
		pending: map[string]chan history.Op{}, faults: map[string]func(context.Context) error{},
		killed: map[int]bool{}, paused: map[int]bool{}, done: make(chan struct{}), start: time.Now(),
	}
	p.follow()
	return p
}

// follow copies the gateway's ledger events for this play's orders into
// its history, stamped on the history's clock.
func (p *play) follow() {
	events, unsub := p.r.Env.GatewayController().Subscribe()
	p.unsub = unsub
	go func() {
		defer close(p.done)
		for ev := range events {
			if _, ours := p.orders.Load(ev.OrderID); !ours || (ev.Type != "charge" && ev.Type != "decline") {
				continue
			}
			status := "succeeded"
			if ev.Type == "decline" {
				status = "failed"
			}
			p.rec.Charge(history.Charge{ID: ev.ChargeID, Order: ev.OrderID, Amount: ev.Amount, Currency: ev.Currency,
				Status: status, IdempotencyKey: ev.IdempotencyKey, APIKey: ev.APIKey, At: p.rec.At(ev.Time)})
		}
	}()
}

func (p *play) stop() {
	p.unsub()
	<-p.done
	p.client.Close()
}

func (p *play) steps(ctx context.Context) error {
	for i, s := range p.sc.Steps {
		if err := p.step(ctx, s); err != nil {
			return fmt.Errorf("step %d (%s): %w", i, s, err)
		}
	}
	return p.collect(ctx, []string{"*"})
}

func (p *play) step(ctx context.Context, s Step) error {
	switch {
	case s.Send != nil:
		return p.send(ctx, *s.Send)
	case s.Wait != nil:
		return p.wait(ctx, *s.Wait)
	case s.Fault != nil:
		return p.inject(ctx, *s.Fault)
	case s.Heal != "":
		return p.heal(ctx, s.Heal)
	case s.Release != "":
		return p.r.Env.GatewayController().Release(p.holdOf(ctx, s.Release))
	}
	return p.process(ctx, s)
}

// RealOrder and RealKey map symbolic names to this example's identities.
func (p *play) realOrder(sym string) string { return "ord_" + p.nonce + "_" + sym }
func (p *play) realKey(sym string) string   { return p.nonce + "-" + sym }

func (p *play) send(ctx context.Context, s Send) error {
	req, err := p.request(s)
	if err != nil {
		return err
	}
	p.orders.Store(req.Order, true)
	if o := p.bodyOrder(req.Body); o != "" {
		p.orders.Store(o, true) // a mutated body may name another order
	}
	if !s.Async {
		p.client.Do(ctx, req)
		return nil
	}
	ch := make(chan history.Op, 1)
	p.pending[s.ID] = ch
	go func() { ch <- p.client.Do(ctx, req) }()
	return nil
}

func (p *play) request(s Send) (client.Request, error) {
	s.defaults()
	if s.Replica >= p.r.Env.Replicas() {
		return client.Request{}, fmt.Errorf("replica %d: the environment has %d", s.Replica, p.r.Env.Replicas())
	}
	tenants := p.r.Target.Tenants
	if s.Tenant >= len(tenants) {
		return client.Request{}, fmt.Errorf("tenant %d: the target has %d", s.Tenant, len(tenants))
	}
	req := client.Request{Client: s.Client, Replica: s.Replica, Key: p.realKey(s.Key), Order: p.realOrder(s.Order),
		Amount: s.Amount, Currency: s.Currency, Purpose: s.Purpose}
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
	return req, nil
}

func (p *play) bodyOrder(body []byte) string {
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

func (p *play) process(ctx context.Context, s Step) error {
	env := p.r.Env
	switch {
	case s.Kill != nil:
		p.killed[*s.Kill] = true
		return p.recordProcess(*s.Kill, "kill", func() error { return env.Kill(*s.Kill) })
	case s.Restart != nil:
		delete(p.killed, *s.Restart)
		return p.recordProcess(*s.Restart, "restart", func() error { return env.Restart(ctx, *s.Restart) })
	case s.Pause != nil:
		p.paused[*s.Pause] = true
		return p.recordProcess(*s.Pause, "pause", func() error { return env.Pause(*s.Pause) })
	case s.Resume != nil:
		delete(p.paused, *s.Resume)
		return p.recordProcess(*s.Resume, "resume", func() error { return env.Resume(*s.Resume) })
	}
	return fmt.Errorf("empty step")
}

// recordProcess records process faults as spans: a kill or pause opens
// one, the matching restart or resume heals it.
func (p *play) recordProcess(replica int, what string, do func() error) error {
	name := fmt.Sprintf("replica%d", replica)
	switch what {
	case "kill", "pause":
		id := p.rec.Inject(history.Fault{Name: what, Target: name})
		p.faults[what+name] = func(context.Context) error { p.rec.Heal(id); return nil }
	default:
		open := map[string]string{"restart": "kill", "resume": "pause"}[what]
		if heal, ok := p.faults[open+name]; ok {
			defer heal(context.Background())
			delete(p.faults, open+name)
		}
	}
	if err := do(); err != nil {
		return fmt.Errorf("%s %s: %w", what, name, err)
	}
	return nil
}

func (p *play) inject(ctx context.Context, f Fault) error {
	if p.r.Inject == nil {
		return fmt.Errorf("fault %s: this runner has no fault injector", f.ID)
	}
	order := ""
	if f.Order != "" {
		order = p.realOrder(f.Order)
	}
	heal, err := p.r.Inject(ctx, f, order)
	if err != nil {
		return err
	}
	params := map[string]string{}
	for k, v := range f.Params {
		params[k] = v
	}
	if f.Direction != "" {
		params["direction"] = f.Direction
	}
	tgt := f.Link
	if tgt == "" {
		tgt = "gateway"
	}
	id := p.rec.Inject(history.Fault{Name: f.Kind, Target: tgt, Params: params, Order: order})
	p.faults[f.ID] = func(ctx context.Context) error {
		err := heal(ctx)
		p.rec.Heal(id)
		return err
	}
	return nil
}

func (p *play) heal(ctx context.Context, id string) error {
	h, ok := p.faults[id]
	if !ok {
		return fmt.Errorf("heal %s: no such active fault", id)
	}
	delete(p.faults, id)
	return h(ctx)
}

// cleanup repairs what the scenario broke, so the next example starts on
// a healthy environment: faults healed, holds released, replicas resumed
// and restarted. It always runs, also after a failed step.
func (p *play) cleanup(ctx context.Context) error {
	var errs []string
	ctx = context.WithoutCancel(ctx)
	p.r.Env.GatewayController().ReleaseAll()
	for id := range p.faults {
		if strings.HasPrefix(id, "kill") || strings.HasPrefix(id, "pause") {
			continue
		}
		if err := p.heal(ctx, id); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for i := range p.paused {
		if err := p.process(ctx, Step{Resume: &i}); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for i := range p.killed {
		if err := p.process(ctx, Step{Restart: &i}); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if err := p.collect(ctx, []string{"*"}); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("cleanup: %s", strings.Join(errs, "; "))
	}
	return nil
}
