package gatewaysim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ErrInvalidKeepKeys is a KeepKeys that names no orders or keeps them
// for a negative time.
var ErrInvalidKeepKeys = errors.New("gatewaysim: invalid keep-keys")

// KeepKeys keeps the idempotency keys of some orders past the provider's
// lifetime (Config.IdempotencyTTL). A provider forgets a key on its own
// clock: in production a day, far longer than any crash recovery, so a
// server may recover a payment whose answer it lost by re-sending it
// under its key. In a test run the provider's lifetime is compressed with
// the server's promise to less than a recovery takes, so the harness says
// which payments are in recovery (a request of theirs got an
// indeterminate answer), and their keys are kept until the recovery is
// over: every other key is forgotten at the lifetime, as the provider
// would forget it.
type KeepKeys struct {
	// Prefix selects the orders: every order whose id starts with it,
	// present and future (the runner names an example's orders
	// ord_<nonce>_<name>, so one prefix is one example).
	Prefix string `json:"prefix"`
	// ForMillis is how long from now, in milliseconds, the keys are kept
	// at least; 0 keeps them until a later KeepKeys of the same Prefix
	// says otherwise. A KeepKeys replaces the last one of its Prefix.
	ForMillis int64 `json:"for_ms"`
}

// KeepKeys applies r: the keys of its orders are kept, also those the
// lifetime had forgotten within the last KeepHorizon (nothing asked for
// them since, so nothing can tell).
func (s *Sim) KeepKeys(r KeepKeys) error {
	if r.Prefix == "" || r.ForMillis < 0 {
		return fmt.Errorf("%w: want a prefix of order ids and for_ms >= 0 (0: until released), got %+v", ErrInvalidKeepKeys, r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	var until time.Time
	if r.ForMillis > 0 {
		until = now.Add(time.Duration(r.ForMillis) * time.Millisecond)
	}
	s.idem.keep(r.Prefix, until, now)
	return nil
}

// simKeepKeys is POST /_sim/keep-keys with a KeepKeys as its JSON body.
func (s *Sim) simKeepKeys(w http.ResponseWriter, r *http.Request) {
	simApply(w, r, ErrInvalidKeepKeys, s.KeepKeys)
}

// KeepKeys calls POST /_sim/keep-keys.
func (c *Client) KeepKeys(ctx context.Context, r KeepKeys) error {
	return c.do(ctx, http.MethodPost, "/_sim/keep-keys", r, nil)
}
