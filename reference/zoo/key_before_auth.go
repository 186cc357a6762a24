package zoo

import (
	"context"
	"net/http"

	"github.com/idemcheck/idemcheck/reference"
)

// refusedNamespace is where key-before-auth records the keys of requests
// it refused for their credentials: no tenant is known yet.
const refusedNamespace = "unauthenticated"

// keyBeforeAuth is the reference with its idempotency layer in front of
// authentication: a request refused for its credentials (401) has its key
// recorded first, under the bare key (no tenant is known yet), as a
// finished request. The client re-authenticates and sends the same
// request again with the same key: the key is known, and the request is
// refused as a reuse of the key for another request (422), for good. No
// money moves, but the payment can never be made under its key.
//
// Incident (Mangopay/mangopay2-nodejs-sdk#337): a call made with an
// expired OAuth token was refused; the SDK re-authenticated and redid the
// call with the same Idempotency-Key, and the API rejected it because the
// key was already known (P2, found by protocol's retries after a refusal
// of credentials).
var keyBeforeAuth = Variant{
	Name: "key-before-auth",
	Bug:  "records a key before authenticating: a request refused 401 binds its key, and the same request after re-authentication is refused 422 for good",
	New:  serving(func(s *reference.Server) Server { return keyBeforeAuthServer{s} }, nil),
}

// keyBeforeAuthServer is key-before-auth's server.
type keyBeforeAuthServer struct{ *reference.Server }

// Handler records the key of a request refused for its credentials, and
// refuses an authenticated request whose key was recorded so.
func (k keyBeforeAuthServer) Handler() http.Handler {
	next := k.Server.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := reference.ParseIdempotencyKey(r.Header.Values("Idempotency-Key"))
		if r.Method != http.MethodPost || r.URL.Path != "/v1/charges" || err != nil {
			next.ServeHTTP(w, r)
			return
		}
		if _, err := reference.ParseBearer(r.Header); err != nil {
			k.record(r.Context(), key)
			next.ServeHTTP(w, r)
			return
		}
		if _, err := k.Store().Lookup(r.Context(), refusedNamespace, reference.KeyHash(key)); err == nil {
			k.Mismatch().Write(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// record stores key as a finished, refused request of no tenant.
func (k keyBeforeAuthServer) record(ctx context.Context, key string) {
	cfg, st := k.Config(), k.Store()
	now := cfg.Now()
	c := reference.Claim{Tenant: refusedNamespace, KeyHash: reference.KeyHash(key), Key: key, Fingerprint: []byte("refused"),
		RequestID: reference.NewID("req_"), Owner: cfg.ReplicaID, Now: now, Lease: cfg.Lease, TTL: cfg.TTL, Forget: cfg.TombstoneTTL}
	if ok, _, err := st.Claim(ctx, c); err != nil || !ok {
		return
	}
	st.Finish(ctx, c.Tenant, c.KeyHash, c.RequestID, reference.Result{Status: http.StatusUnauthorized, Body: []byte(`{"status":401}`)}, now)
}
