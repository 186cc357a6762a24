package zoo

import (
	"context"
	"net/http"

	"github.com/idemcheck/idemcheck/reference"
)

// storeIfDelivered decides what to keep from the transport's answer
// rather than the handler's: after the charge has run and its result is
// stored, it looks at the client's connection, and when the client is
// gone (its request's context cancelled: the connection closed while the
// handler waited on the gateway) it deletes the key, reasoning that an
// answer nobody received was never given. The charge was committed all
// the same; the client, which saw its request cut, retries with the same
// key, claims it afresh under a new gateway request id, and is charged
// again.
//
// Incident (pome-sh/digital-twins#275): the idempotency middleware
// stored a key's response from what the transport reported having
// written: when the response was lost after the handler committed
// (the client's connection gone), it stored nothing, and the retry ran
// the handler a second time (M1, found by crash-window's
// drop-client-in-hang).
var storeIfDelivered = Variant{
	Name: "store-if-delivered",
	Bug:  "deletes a key whose answer could not be delivered (the client's connection gone when the charge finished), so the client's retry charges again",
	New: serving(func(s *reference.Server) Server { return clientAware{s} }, func(s *reference.Server) reference.Hooks {
		release := deleteClaim(s)
		return reference.Hooks{Finished: func(ctx context.Context, j reference.Job, _ reference.Result) {
			if client, ok := ctx.Value(clientKey{}).(context.Context); ok && client.Err() != nil {
				release(ctx, j)
			}
		}}
	}),
}

// clientKey holds, in a request's context, the context of the client's
// request itself: the reference detaches its charge from the client's
// cancellation (context.WithoutCancel keeps values, not cancellation),
// and store-if-delivered reads the client's state through it.
type clientKey struct{}

// clientAware is a server whose handler hands its charge the client's
// request context as a value (clientKey).
type clientAware struct{ *reference.Server }

// Handler is the reference's handler with the client's context kept.
func (c clientAware) Handler() http.Handler {
	next := c.Server.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, r.Context())))
	})
}
