package runner

import (
	"context"
	"fmt"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/scenarios"
	"github.com/idemcheck/idemcheck/target"
)

// priceUniquely gives s, under an amount trace (protocol.trace: amount:
// the server names no order at the gateway), an amount that no other
// payment of the run has, and tells the gateway which order it pays for,
// so that a charge is attributed by amount and currency. The same
// payment (order, amount and currency as the scenario wrote them) keeps
// its amount for every send, so a retry's body stays equal; another
// amount or currency for the same order (key-reuse's different request)
// is another payment, with an amount of its own.
func (p *execution) priceUniquely(ctx context.Context, s *scenarios.Send) error {
	if !p.r.byAmount || s.Body != "" {
		return nil
	}
	s.Defaults()
	k := fmt.Sprintf("%s\x00%d\x00%s", s.Order, s.Amount, s.Currency)
	p.mu.Lock()
	amount, priced := p.priced[k]
	if !priced {
		amount = target.UniqueAmountFloor + p.r.state.paid.Add(1) - 1
		p.priced[k] = amount
	}
	p.mu.Unlock()
	if !priced {
		e := gatewaysim.Expectation{Order: p.realOrder(s.Order), Amount: amount, Currency: s.Currency}
		if err := p.r.cfg.Env.GatewayController().Expect(ctx, e); err != nil {
			return fmt.Errorf("send %s: attribute its amount: %w", s.ID, err)
		}
	}
	s.Amount = amount
	return nil
}
