package runner

import (
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/client"
	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/scenarios"
)

// execution is one scenario being played: its state from the first step
// to its history. The example's own goroutine plays its steps; other
// goroutines reach it too: another example's goroutine records a fault
// they share (live.go: liveThrough, healedThrough, livedSkew), an async
// send's goroutine answers it, a kill_in_hang's watcher records its kill.
// So every field says who writes it: "set by newPlay" (never written
// again), "own" (the example's goroutine alone, no lock), or the lock
// that guards it.
type execution struct {
	r      *Runner            // set by newPlay
	sc     scenarios.Scenario // set by newPlay
	nonce  string             // set by newPlay
	rec    *history.Recorder  // set by newPlay; guards itself
	env    faults.Env         // set by newPlay: the environment, recording into rec (through labels)
	labels *labeller          // set by newPlay; guards itself
	client *client.Client     // set by newPlay; guards itself
	plan   []stepFault        // set by newPlay: the fault each step injects or heals

	pending map[string]chan history.Op // own: async sends not collected yet
	faults  map[string]active          // own: active faults by scenario id ("kill:replica0" for process steps)
	// recovering is when the recovery window of a Wait{Recovery} began
	// (zero before one): converging sends retry until it plus the window
	// and the policy's ConvergeSlack (own).
	recovering time.Time
	// seen counts, per real order, the ledger events already taken into
	// the recorder, so that evidence can be gathered more than once (own).
	seen     map[string]int
	included map[string]bool // own: charge ids in the recorder
	strikes  strikes         // own: the crash-wave strikes left out (strike.go)
	// retryBy is when a crash wave whose recovery window does not fit
	// before its final retries sends them at the latest (Wait.Within;
	// zero otherwise): set by the example's goroutine before it starts
	// the final sends, read by them (pastPromise).
	retryBy time.Time

	mu     sync.Mutex
	orders map[string]bool           // real order ids this example sent (mu)
	last   map[string]client.Request // the latest request of each (tenant, key) and what it asked, by sentAs (mu)
	start  time.Time                 // when the first request was sent (mu)
	// answered is when each send was answered, by its id, once its
	// answer is in (a synchronous send, a collected one) (mu).
	answered map[string]time.Time
	// healed is when the last fault this example lived through healed,
	// its own or a foreign one (a restarted replica ready again), and
	// foreignActive counts the foreign faults not healed yet (mu; written
	// by the examples that share them): its recovery window counts from
	// then (quietFrom).
	healed        time.Time
	foreignActive int
	// skew is the largest clock skew p lived through (mu; written by the
	// examples that share it): its recovery windows stretch by it
	// (livedSkew).
	skew time.Duration
	// converging are the (tenant, key)s a converging send retried to its
	// deadline already: converge does not give them a second deadline (mu).
	converging map[string]bool
	// priced is each payment's amount under an amount trace, by its
	// order, amount and currency as the scenario wrote them (mu).
	priced map[string]int64
	// keeping says the gateway keeps p's keys (a request of p got an
	// indeterminate answer), and keepErr that it could not be told (mu;
	// keep.go).
	keeping bool
	keepErr error
}

func (r *Runner) newPlay(sc scenarios.Scenario) *execution {
	pol := r.cfg.Target.Policy
	r.Ledger()
	rec := history.NewRecorder(history.History{
		Target: r.cfg.Target.Name, Family: sc.Family, Seed: sc.Seed, Replicas: r.cfg.Env.Replicas(),
		Tenants: r.cfg.Target.Tenants, Stores: r.cfg.Target.StoreNames(), Policy: pol, Gateway: r.cfg.Gateway,
	})
	urls := make([]string, r.cfg.Env.Replicas())
	for i := range urls {
		urls[i] = r.cfg.Env.ReplicaURL(i)
	}
	timeout := r.cfg.Timeout
	if timeout == 0 {
		timeout = pol.MaxWait + 15*time.Second
	}
	labels := &labeller{rec: rec, shared: map[int]func(){}}
	p := &execution{
		r: r, sc: sc, nonce: r.nonce(), rec: rec, env: faults.Bind(r.cfg.Env, labels, r.log()), labels: labels,
		client: client.New(r.cfg.Target.Protocol, rec, urls, timeout),
		orders: map[string]bool{}, last: map[string]client.Request{}, priced: map[string]int64{}, answered: map[string]time.Time{},
		pending: map[string]chan history.Op{}, faults: map[string]active{},
		converging: map[string]bool{}, seen: map[string]int{}, included: map[string]bool{},
	}
	labels.share = func(f history.Fault) func() { return r.share(p, f) }
	p.plan = p.planFaults()
	return p
}
