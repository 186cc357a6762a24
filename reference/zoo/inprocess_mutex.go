package zoo

import (
	"context"
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
	New: withoutSweeper(hooked(func(s *reference.Server) reference.Hooks {
		l := &lockedCheckThenAct{checkThenAct: checkThenAct{s: s}}
		return reference.Hooks{Charge: l.charge}
	})),
}

type lockedCheckThenAct struct {
	checkThenAct
	locks sync.Map // tenant + key hash → *sync.Mutex
}

func (l *lockedCheckThenAct) charge(ctx context.Context, req *reference.ChargeRequest) reference.Answer {
	mu, _ := l.locks.LoadOrStore(req.Tenant+"."+string(req.KeyHash), new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	return l.checkThenAct.charge(ctx, req)
}
