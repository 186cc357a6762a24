package zoo

import (
	"net/http"
	"strings"

	"github.com/idemcheck/idemcheck/reference"
)

// Organisation is the organisation of a bearer token as the members that
// scope keys per organisation read it: the token up to its first '.'
// (acme.alice is a principal of acme), as API keys that carry their
// account's id do. A token without a '.' is an organisation of one.
func Organisation(token string) string {
	org, _, _ := strings.Cut(token, ".")
	return org
}

// orgScoped is a server whose key namespace is the organisation.
type orgScoped struct{ Server }

// OrgScoped serves every request with s as its principal's organisation
// (Organisation): the principals of one organisation share s's key
// namespace.
func OrgScoped(s Server) Server { return orgScoped{s} }

// Handler is s's handler, the bearer token replaced by its organisation.
func (o orgScoped) Handler() http.Handler {
	next := o.Server.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token, err := reference.ParseBearer(r.Header); err == nil {
			r.Header.Set("Authorization", "Bearer "+Organisation(token))
		}
		next.ServeHTTP(w, r)
	})
}

// orgScopedKeys stores a key under the organisation of the principal that
// sent it, not the principal: two principals of one organisation (two API
// keys of an account, two members of a team) that send one key share its
// record. Bodies are compared as the reference compares them, so the
// second principal's alike request is taken for a retry and answered with
// the first principal's charge, and a different one is refused 422 for a
// key it never used.
//
// Incident (RamaAditya49/titen#37, its other half): the idempotency
// record was keyed by organisation, endpoint and key, with no principal
// in it: two principals of one organisation reusing a key and body
// received the first one's stored result, and one could make another's
// key unusable (M5, P2; found by tenants' two principals of one
// organisation, which a target declares under organisations).
var orgScopedKeys = Variant{
	Name: "org-scoped-keys",
	Bug:  "keys are scoped per organisation, not per principal: two principals of one organisation share a key's record",
	New:  serving(func(s *reference.Server) Server { return OrgScoped(s) }, nil),
}
