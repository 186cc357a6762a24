package garden

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/zoo"
)

// opaqueKeys treats the Idempotency-Key header as an opaque string, as
// Stripe does: `"k"` (the draft's quoted sf-string form) is a key of its
// own, not k. A client that always sends one form is deduplicated either
// way; only mixing forms within one payment tells the two designs apart,
// and no client does that. A quoted header is mapped to
// a bare key derived from its exact bytes before the reference sees it.
var opaqueKeys = zoo.Variant{
	Name: "opaque-keys",
	Bug:  "none: the key header is opaque, so the quoted form is a different key (as at Stripe)",
	New: func(cfg reference.Config) (zoo.Server, error) {
		return newWrapped(cfg, opaqueKeyHeader)
	},
}

// opaqueKeyHeader maps a quoted key header to a bare key of its own,
// derived from the header's exact bytes.
func opaqueKeyHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("Idempotency-Key"); strings.HasPrefix(h, `"`) {
			sum := sha256.Sum256([]byte(h))
			r.Header.Set("Idempotency-Key", "opaque_"+hex.EncodeToString(sum[:16]))
		}
		next.ServeHTTP(w, r)
	})
}
