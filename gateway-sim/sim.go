package gatewaysim

import (
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultIdempotencyTTL is Stripe's: keys can be pruned once 24 hours old.
const DefaultIdempotencyTTL = 24 * time.Hour

// Config configures a Sim. The zero value is a Stripe-like gateway with
// 24-hour idempotency keys, the real clock and no logging.
type Config struct {
	// IdempotencyTTL is how long a key is remembered, from its first
	// request. Short TTLs let a harness test late retries; default 24h.
	IdempotencyTTL time.Duration
	// NoIdempotency makes the gateway ignore Idempotency-Key, like gateways
	// without idempotency support: every request is processed afresh. With
	// Provider "" or stripe it is the profile none.
	NoIdempotency bool
	// Provider is the provider profile the simulator speaks (ProviderNames:
	// stripe, checkout, adyen, none); "" is stripe. An unknown name makes
	// New panic: check it with ProfileNamed first.
	Provider string
	// Seed drives every random choice (probability-matched faults, charge
	// ids), so a run is a function of its seed. Reusing a seed across
	// simulator processes reuses charge ids.
	Seed int64
	// Now is the clock for TTLs, ledger times and events; default time.Now.
	// Latency faults sleep in real time regardless.
	Now func() time.Time
	// Logger receives the simulator's decisions; nil discards them.
	Logger *slog.Logger
	// Trace is where requests name their order (zero: DefaultTrace);
	// SetTrace changes it while the simulator runs.
	Trace Trace
}

func (c Config) withDefaults() Config {
	if c.NoIdempotency && (c.Provider == "" || c.Provider == ProviderStripe) {
		c.Provider = ProviderNone
	}
	if c.IdempotencyTTL <= 0 {
		c.IdempotencyTTL = DefaultIdempotencyTTL
		if p, err := ProfileNamed(c.Provider); err == nil && p.Idempotency.Lifetime > 0 {
			c.IdempotencyTTL = p.Idempotency.Lifetime
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Trace.IsZero() {
		c.Trace = DefaultTrace
	}
	return c
}

// Sim is a simulated payment gateway. All of its state sits behind one
// mutex: decisions about money are serialised, which is what makes the
// ledger an oracle (there is exactly one order in which charges happened).
type Sim struct {
	cfg     Config
	log     *slog.Logger
	mux     *http.ServeMux // the provider's API
	control *http.ServeMux // the control API
	events  *eventLog
	tracer  *tracer
	dialect dialect      // the provider's wire format
	profile Profile      // its idempotency semantics; no Header when NoIdempotency
	reqSeq  atomic.Int64 // Request-Id counter
	closeMu sync.Once

	mu        sync.Mutex
	ledger    ledger
	intents   intentTable
	idem      *idemStore
	faults    faultTable
	holds     holdTable
	requests  int64 // POSTs to charges and PaymentIntents since reset, for Match.Nth
	faultSeq  int64
	holdSeq   int64
	idRand    *rand.Rand
	faultRand *rand.Rand
}

// New returns a simulator with an empty ledger and no faults.
func New(cfg Config) *Sim {
	cfg = cfg.withDefaults()
	d, err := dialectNamed(cfg.Provider)
	if err != nil {
		panic(err)
	}
	profile := d.profile()
	if cfg.NoIdempotency {
		profile.Idempotency = Idempotency{}
	}
	s := &Sim{
		dialect:   d,
		profile:   profile,
		cfg:       cfg,
		log:       cfg.Logger,
		events:    newEventLog(),
		tracer:    newTracer(cfg.Trace),
		ledger:    newLedger(),
		intents:   newIntentTable(),
		idem:      newIdemStore(cfg.IdempotencyTTL),
		holds:     holdTable{},
		idRand:    newRand(cfg.Seed, streamIDs),
		faultRand: newRand(cfg.Seed, streamFaults),
	}
	s.mux, s.control = s.routes(), s.controlRoutes()
	return s
}

// idempotent says whether the gateway honours idempotency keys.
func (s *Sim) idempotent() bool { return s.profile.Idempotency.Header != "" }

// Profile is the provider profile the simulator speaks.
func (s *Sim) Profile() Profile { return s.profile }

// Handler serves the provider's API (Stripe's /v1/charges..., or the
// profile's own): the data plane, the address handed to a server under
// test. It does not serve the control API: a request for /_sim/... gets
// the provider's 404, as it would from the real provider. Mount it on any
// server; httptest.NewServer(sim.Handler()) is the in-process setup.
// Each request that is not the provider's API is recorded as an
// EventForeign event (HandlerVia names the path it came by).
func (s *Sim) Handler() http.Handler { return s.HandlerVia("") }

// ControlHandler serves the control API (/_sim/...: ledger, faults,
// holds, events, reset): the control plane, for the harness alone. Serve
// it on another listener than Handler, one the server under test is
// never told of (cmd/gateway-sim's --control-addr); in-process, the
// harness calls the Sim's methods instead.
func (s *Sim) ControlHandler() http.Handler { return s.control }

// Reset returns the simulator to its just-created state: empty ledger,
// PaymentIntents and idempotency store, no faults, request count zero, fault draws restarted
// from the seed. Held responses are released first. Charge ids and event
// sequence numbers are not reused, so nothing from before the reset can be
// mistaken for something after it. Requests in flight across a Reset finish
// against the new ledger.
func (s *Sim) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseAllLocked()
	s.ledger = newLedger()
	s.intents = newIntentTable()
	s.idem = newIdemStore(s.cfg.IdempotencyTTL)
	s.faults.clear()
	s.requests = 0
	s.faultRand = newRand(s.cfg.Seed, streamFaults)
	s.events.forget()
	s.tracer.forgetExpected()
	s.emit(Event{Type: EventReset})
	s.log.Info("reset")
}

// Close releases every hold and ends every event subscription (closing the
// channels and SSE streams), so an http.Server serving the simulator can
// shut down. The Stripe API keeps working after Close; only event delivery
// stops.
func (s *Sim) Close() {
	s.closeMu.Do(func() {
		s.ReleaseAll()
		s.events.close()
	})
}
