package garden

import (
	"net/http"

	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/zoo"
)

// inFlight429 answers a duplicate whose key is still in flight with 429
// Too Many Requests and Retry-After, where the reference says 409: Stripe
// answers some lock conflicts this way. It tells the client to retry, so
// it is not a definitive failure; the reference's
// 409s are the only ones it changes (it answers 409 for nothing else).
var inFlight429 = zoo.Variant{
	Name: "in-flight-429",
	Bug:  "none: a duplicate in flight is answered 429 with Retry-After instead of 409",
	New: func(cfg reference.Config) (zoo.Server, error) {
		return newWrapped(cfg, conflictAs429)
	},
}

// conflictAs429 answers 429 wherever the reference answers 409.
func conflictAs429(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&statusMap{ResponseWriter: w, from: http.StatusConflict, to: http.StatusTooManyRequests}, r)
	})
}

// statusMap rewrites one status code on its way out.
type statusMap struct {
	http.ResponseWriter
	from, to int
}

func (s *statusMap) WriteHeader(code int) {
	if code == s.from {
		code = s.to
	}
	s.ResponseWriter.WriteHeader(code)
}
