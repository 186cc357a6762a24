package reference

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// dbTimeout bounds one store statement issued after the client's context is
// detached (finishing a key must not be cut short by a client hang-up).
const dbTimeout = 10 * time.Second

// Server is the reference idempotency server: a stateless replica. Any
// number of Servers on one database are as safe as one, because every
// decision is a single atomic operation of its Store (a conditional
// statement in PostgreSQL).
type Server struct {
	cfg    Config
	store  Store
	hub    *Hub
	keeper *Keeper
	gw     *Gateway
	m      *Metrics
	log    *slog.Logger
	hooks  Hooks
	// offset is the store's clock minus the replica's own (Config.Now), as last measured
	// (Config.StoreClock); 0 when the store's clock is not used.
	offset atomic.Int64
}

// New builds a server. It does no I/O; call Run for the notification
// listener and the sweeper, and serve Handler.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	log := cfg.Logger.With("replica", cfg.ReplicaID)
	store := cfg.Store
	s := &Server{
		cfg:   cfg,
		store: store,
		hub:   NewHub(store, log),
		gw:    cfg.Gateway,
		m:     NewMetrics(cfg.Registry),
		log:   log,
	}
	s.keeper = NewKeeper(store, cfg.ReplicaID, cfg.Lease, s.now, log)
	return s, nil
}

// Store is the server's key store adapter, for tests and variants.
func (s *Server) Store() Store { return s.store }

// Hub is the server's notification listener.
func (s *Server) Hub() *Hub { return s.hub }

// Metrics are the server's Prometheus series.
func (s *Server) Metrics() *Metrics { return s.m }

// Config is the configuration in effect, defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// Ready is closed once the notification listener first listens; serve
// after it, or waiters fall back to their timers until it does.
func (s *Server) Ready() <-chan struct{} { return s.hub.Ready() }

// Handler serves POST /v1/charges, GET /healthz and GET /metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/charges", s.serveCharge)
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", serveUnknown)
	return s.dated(s.recoverPanics(mux))
}

// serveUnknown answers other paths and methods in problem+json too.
func serveUnknown(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/charges" {
		w.Header().Set("Allow", http.MethodPost)
		WriteProblem(w, Problem{Status: http.StatusMethodNotAllowed, Detail: "use POST"})
		return
	}
	WriteProblem(w, Problem{Status: http.StatusNotFound, Detail: "no such endpoint: " + truncate(r.URL.Path, 100)})
}

// Run runs the notification listener and, unless disabled, the sweeper,
// until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	s.alignClock(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.hub.Run(ctx) })
	if s.cfg.SweepInterval > 0 {
		wg.Go(func() { s.sweepLoop(ctx) })
	}
	wg.Wait()
	return nil
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	status, code := "ok", http.StatusOK
	if err := s.store.Ping(ctx); err != nil {
		status, code = "database unreachable", http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"status": status, "listening": s.hub.Listening(), "replica": s.cfg.ReplicaID})
}

// recoverPanics is the last line of defence: a bug answers 500 and is
// logged instead of killing the connection silently.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic serving request", "panic", v, "path", r.URL.Path)
				WriteProblem(w, Problem{Status: http.StatusInternalServerError, Detail: "internal error"})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// NewID returns prefix + 128 random bits in hex: request and replica ids.
func NewID(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
