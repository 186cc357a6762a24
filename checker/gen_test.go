package checker_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/idemcheck/idemcheck/history"
)

// generate builds a history of at least n ops from a correct server:
// interleaved keys of two tenants that share key strings, each with a first
// request (mostly 201, some declines, some timeouts whose charge a retry
// recovers), concurrent duplicates that wait for their owner, sequential
// retries, re-serialised equal bodies and mutated bodies refused with 422.
// It is deterministic in seed.
func generate(n int, seed uint64) *history.History {
	rng := rand.New(rand.NewPCG(seed, 0x1de4))
	b := newBuilder()
	b.h.Replicas, b.h.Seed = 2, seed
	for k := 0; len(b.h.Ops) < n; k++ {
		g := keyGen{b: b, rng: rng, tenant: []string{"ta", "tb"}[k%2], key: fmt.Sprintf("k%d", k/2),
			order: fmt.Sprintf("ord_%d", k), charge: fmt.Sprintf("ch_%d", k), t0: time.Duration(k) * 3 * ms}
		g.run()
	}
	return b.history()
}

// keyGen writes the requests of one key.
type keyGen struct {
	b                          *builder
	rng                        *rand.Rand
	tenant, key, order, charge string
	t0                         time.Duration
	status                     int // the stored answer: 201 or 402
}

func (g *keyGen) run() {
	dur := time.Duration(50+g.rng.IntN(250)) * ms
	end := g.first(dur)
	if g.rng.IntN(10) < 3 {
		g.answer(g.t0+dur/4, g.t0+dur+5*ms, true) // duplicate waits for its owner
	}
	for i := range 1 + g.rng.IntN(3) {
		at := end + time.Duration(100*(i+1))*ms
		op := g.answer(at, at+20*ms, true)
		if g.rng.IntN(10) == 0 {
			op.Body = fmt.Sprintf(`{ "order_id": %q, "currency": "usd", "amount": 1.25e3 }`, g.order)
		}
	}
	if g.rng.IntN(10) == 0 {
		at := end + 500*ms
		m := g.b.op(g.tenant, g.key, g.order, at, at+20*ms, 422, "")
		m.Amount, m.Body = 999, bodyOf(g.order, 999, "usd")
	}
}

// first writes the key's first request and its ledger charge; it returns
// when the client had its answer (or gave up).
func (g *keyGen) first(dur time.Duration) time.Duration {
	switch g.rng.IntN(20) {
	case 0:
		g.status = 402
		g.b.op(g.tenant, g.key, g.order, g.t0, g.t0+dur, 402, "")
		g.b.charge(g.charge, g.order, g.t0+dur/2, "failed")
	case 1:
		g.status = 201
		g.b.op(g.tenant, g.key, g.order, g.t0, g.t0+dur, 0, "").Error = "timeout"
		g.b.charge(g.charge, g.order, g.t0+dur/2, "succeeded")
	default:
		g.status = 201
		g.b.op(g.tenant, g.key, g.order, g.t0, g.t0+dur, 201, g.charge)
		g.b.charge(g.charge, g.order, g.t0+dur/2, "succeeded")
	}
	return g.t0 + dur
}

// answer writes a request that gets the key's stored answer.
func (g *keyGen) answer(inv, done time.Duration, replay bool) *history.Op {
	if g.status == 402 {
		return g.b.op(g.tenant, g.key, g.order, inv, done, 402, "")
	}
	op := g.b.op(g.tenant, g.key, g.order, inv, done, 201, g.charge)
	op.Replayed = replay
	return op
}
