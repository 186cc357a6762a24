package zoo

import (
	"net/http"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// lockWait500 is the reference whose duplicates fail with 500 when they
// find the key in flight: the loser of a cache lock gives up at once and
// throws, and the framework renders the exception as a server error,
// instead of waiting for the owner and then answering 409 with
// Retry-After. Nothing is charged twice (the claim is the reference's),
// and a client retries a 500 as it retries a 409; but a 5xx says "the
// server broke", not "still in progress", and comes without Retry-After.
//
// Incident: square1-io/laravel-idempotency#1 (its fix, PR #2) and #5: a
// request that cannot take the cache lock polls the cache max_lock_wait_time
// - 1 times, once a second, and then throws LockWaitExceededException, a
// 500 (src/Http/Middleware/IdempotencyMiddleware.php, waitForCacheLock):
// with the default max_lock_wait_time of 1 it throws at once. In #5 the
// lock and the payload shared one cache key, and the loser crashed on the
// lock's own value. R3 NON-STRICT, found by concurrent-duplicates.
var lockWait500 = Variant{
	Name: "lock-wait-500",
	Bug:  "a duplicate that finds the key in flight gets 500 at once instead of waiting for the owner, then 409 with Retry-After",
	New: func(cfg reference.Config) (Server, error) {
		cfg.MaxWait = time.Nanosecond // no polling: the default config's none
		s, err := reference.New(cfg)
		if err != nil {
			return nil, err
		}
		return conflictThrows{s}, nil
	},
}

// conflictThrows serves the reference with every 409 turned into a 500.
type conflictThrows struct{ *reference.Server }

// Handler is the reference's handler, its 409s rewritten.
func (c conflictThrows) Handler() http.Handler {
	h := c.Server.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(thrown{w}, r) })
}

// thrown writes a 409 as a 500 without Retry-After.
type thrown struct{ http.ResponseWriter }

func (t thrown) WriteHeader(code int) {
	if code == http.StatusConflict {
		t.Header().Del("Retry-After")
		code = http.StatusInternalServerError
	}
	t.ResponseWriter.WriteHeader(code)
}
