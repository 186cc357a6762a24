package runner

import (
	"context"
	"fmt"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// A provider forgets a key on its own clock. In production that is a day
// or a month, far longer than any crash recovery, so a correct server may
// recover a payment whose answer a crash took by re-sending it under its
// key. In a test run the provider's lifetime is compressed with the
// promise (history.Policy.GatewayKeyTTL) to less than a recovery takes.
// So once a request of an example gets an indeterminate answer (a 5xx, a
// retryable 4xx, a timeout, a reset: history.Info, whatever caused it),
// its payment is in recovery: the gateway keeps the keys of every order
// of that example until the example is over (its payments converged and
// judged) and a band more. Every other key, a payment answered for good,
// is forgotten at the lifetime, as the provider would forget it
// (gatewaysim.KeepKeys).

// keepTimeout bounds one KeepKeys call.
const keepTimeout = 10 * time.Second

// orderPrefix is what every real order of p starts with (realOrder).
func (p *execution) orderPrefix() string { return "ord_" + p.nonce + "_" }

// keepKeys has the gateway keep p's keys, every order's present and
// future, until p is over. Asked once per example; a gateway that could
// not be told is p's error (keepFailed).
func (p *execution) keepKeys() {
	p.mu.Lock()
	first := !p.keeping
	p.keeping = true
	p.mu.Unlock()
	if first {
		p.askKeep(0)
	}
}

// releaseKeys ends the keep of p's keys once p is over: they are kept a
// band more, then forgotten on the provider's clock.
func (p *execution) releaseKeys() {
	p.mu.Lock()
	keeping := p.keeping
	p.mu.Unlock()
	if keeping {
		p.askKeep(max(p.r.cfg.Target.Policy.Band(), time.Millisecond))
	}
}

func (p *execution) askKeep(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), keepTimeout)
	defer cancel()
	k := gatewaysim.KeepKeys{Prefix: p.orderPrefix(), ForMillis: d.Milliseconds()}
	if err := p.r.cfg.Env.GatewayController().KeepKeys(ctx, k); err != nil {
		p.mu.Lock()
		p.keepErr = fmt.Errorf("the gateway could not be told to keep the keys of the payments in recovery (a correct server's recovery may be charged again): %w", err)
		p.mu.Unlock()
	}
}

// keepFailed is the error of a keep the gateway refused, or nil.
func (p *execution) keepFailed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keepErr
}
