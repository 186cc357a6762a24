package zoo

import (
	"net/http"
	"sync"

	"github.com/idemcheck/idemcheck/reference"
)

// inprocessMutex is the naive check-then-act flow made "safe" with a mutex
// per key held in process memory (a sync.Map of *sync.Mutex): duplicates
// that reach the same replica are serialised, and the second one finds the
// stored response. The lock is invisible to the other replicas.
//
// Incident: safe in a one-replica staging environment; in production,
// duplicates split across two replicas by the load balancer both charge
// (M1, found by concurrent-duplicates across replicas).
var inprocessMutex = Variant{
	Name: "inprocess-mutex",
	Bug:  "serialises a key with an in-process mutex instead of a database claim",
	New: func(cfg reference.Config) (Server, error) {
		n, err := newCheckThenAct(cfg)
		if err != nil {
			return nil, err
		}
		return &lockedCheckThenAct{checkThenAct: n}, nil
	},
}

type lockedCheckThenAct struct {
	*checkThenAct
	locks sync.Map // tenant + key hash → *sync.Mutex
}

func (l *lockedCheckThenAct) Handler() http.Handler { return chargeMux(l.serveCharge, l.cfg) }

func (l *lockedCheckThenAct) serveCharge(w http.ResponseWriter, r *http.Request) {
	_, req, err := parse(r)
	if err != nil {
		refuse(w, err)
		return
	}
	mu, _ := l.locks.LoadOrStore(req.Tenant+"."+string(req.KeyHash), new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	l.charge(r.Context(), req).write(w)
}
