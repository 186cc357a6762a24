package zoo

import (
	"net/http"

	"github.com/idemcheck/idemcheck/reference"
)

// AnonymousToken is the principal a request without credentials is served
// as by a server that takes such requests (Anonymous): one namespace for
// every client that sends none, since the server cannot tell them apart.
const AnonymousToken = "anonymous"

// anonymous is a server whose handler takes requests without credentials.
type anonymous struct{ Server }

// Anonymous serves requests that carry no Authorization header with s,
// as the principal AnonymousToken; every other request reaches s
// unchanged.
func Anonymous(s Server) Server { return anonymous{s} }

// Handler is s's handler, with a missing Authorization taken as
// AnonymousToken's.
func (a anonymous) Handler() http.Handler {
	next := a.Server.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.Header.Values("Authorization")) == 0 {
			r.Header.Set("Authorization", "Bearer "+AnonymousToken)
		}
		next.ServeHTTP(w, r)
	})
}

// anonymousNamespace takes requests without credentials into one
// namespace, as the reference does with Anonymous, but binds a key to
// its namespace alone: no body is compared, for any principal. Two
// clients without credentials that happen to send one key share its
// record, and the second, whatever it asks for, gets the first one's
// stored answer, another order's charge.
//
// Incident (KanishJebaMathewM/Truxify#2382): the middleware cached
// responses under the user's id, or "anonymous" when the request had
// none, and the key, with no hash of the body: unauthenticated callers
// with the same key received each other's responses (P1, found by
// tenants' clients without credentials; also by key-reuse).
var anonymousNamespace = Variant{
	Name: "anonymous-namespace",
	Bug:  "requests without credentials share one namespace (\"anonymous\") and no body is compared: a second client's different request under the same key gets the first one's answer",
	New: serving(func(s *reference.Server) Server { return Anonymous(s) }, func(*reference.Server) reference.Hooks {
		return reference.Hooks{Request: func(req *reference.ChargeRequest) { req.Fingerprint = []byte("any body") }}
	}),
}
