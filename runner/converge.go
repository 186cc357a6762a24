package runner

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idemcheck/idemcheck/client"
	"github.com/idemcheck/idemcheck/history"
)

// converge ends an example with evidence for convergence (M6): every
// request whose last answer was indeterminate (a 5xx from a replica whose
// database link was cut by another example a moment before, a timeout)
// is retried, once the faults have healed, until it gets a definitive
// answer or the recovery window and its slack pass. Without it a correct
// server's passing 503 would leave convergence undecided. A request is
// its (tenant, key) and what it asked (sentAs): the checker judges a
// key's convergence on the requests carrying its body, so a payment's
// 503 followed by a 422 to another body under its key (key-reuse) is
// still retried (it left the key's convergence undecided). The requests
// retry at once, to one deadline; a key whose converging send already
// retried to its deadline is not given another (no-recovery's waves took
// a minute more, one key after another).
func (p *execution) converge(ctx context.Context) {
	last := map[string]history.Op{}
	for _, op := range p.rec.Snapshot(false).Ops {
		k := sentAs(op.Tenant, op.Key, op.Method, op.Path, op.Body)
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
		done := p.converging[op.Tenant+"\x00"+op.Key]
		p.mu.Unlock()
		if ok && !done && op.Outcome == history.Info {
			req.Purpose = "retry-until-definitive"
			wg.Go(func() { p.retry(ctx, req, deadline) })
		}
	}
	wg.Wait()
}

// sentAs names a request for converge: its (tenant, key) and exactly what
// it asked (method, path, body), as its ops record it.
func sentAs(tenant, key, method, path, body string) string {
	return strings.Join([]string{tenant, key, method, path, body}, "\x00")
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
	return t.Add(p.recoveryWindow() + p.r.cfg.Target.Policy.ConvergeSlack())
}

// recoveryWindow is the policy's, stretched by the largest clock skew p
// lived through (livedSkew).
func (p *execution) recoveryWindow() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.r.cfg.Target.Policy.RecoveryWindow + p.skew
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
// again once the environment is quiet. So is an indeterminate one that
// came back past the deadline. Both up to maxQuietRetries times in all.
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
			if p.pastPromise(quiet) || !sent.Before(quiet) || requiet == maxQuietRetries || p.sleepUntil(ctx, quiet) != nil {
				return op
			}
			requiet++
			continue
		}
		wait := retryAfter(op, backoff)
		if time.Now().Add(wait).After(deadline) {
			// An indeterminate answer past the deadline to a try sent
			// before the environment was quiet (a slow answer, up to the
			// client's timeout, from a server still recovering) says
			// nothing of convergence: one more try, once quiet.
			quiet := p.quietAt()
			if invoked := sent.Add(held); !invoked.Before(quiet) || p.pastPromise(quiet) || requiet == maxQuietRetries {
				return op
			}
			requiet++
			wait = max(wait, time.Until(quiet))
		}
		if p.sleepUntil(ctx, time.Now().Add(wait)) != nil {
			return op
		}
		backoff = min(backoff*2, time.Second)
	}
}

// retryWithin re-sends req while its answer is indeterminate, backing
// off from 25ms (doubling, or as Retry-After says), as long as the
// re-send goes out by by (Send.RetryWithin): inside its key's promise,
// clear of its edge. No recovery window is waited: a definitive answer
// decides convergence whenever it comes, and there is no room for one.
func (p *execution) retryWithin(ctx context.Context, req client.Request, by time.Time) history.Op {
	backoff := 25 * time.Millisecond
	for {
		op := p.do(ctx, req)
		if op.Outcome != history.Info || ctx.Err() != nil {
			return op
		}
		next := time.Now().Add(retryAfter(op, backoff))
		if next.After(by) || p.sleepUntil(ctx, next) != nil {
			return op
		}
		backoff *= 2
	}
}

// retryAfter is how long to wait before retrying op: its Retry-After in
// seconds when it gave one, else backoff.
func retryAfter(op history.Op, backoff time.Duration) time.Duration {
	if s, err := strconv.Atoi(op.RetryAfter); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	return backoff
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
