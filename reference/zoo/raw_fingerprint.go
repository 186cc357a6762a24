package zoo

import (
	"crypto/sha256"

	"github.com/idemcheck/idemcheck/reference"
)

// rawFingerprint fingerprints the raw body bytes (SHA-256) instead of the
// canonical JSON form, so a retry whose JSON was re-serialised (keys in
// another order, other whitespace, 2e0 for 2) is taken for a different
// request.
//
// Incident: a client library retries with a re-encoded body, is refused
// with 422, and the customer pays again through another channel (P2,
// found by key-reuse's equal mutations).
var rawFingerprint = Variant{
	Name: "raw-fingerprint",
	Bug:  "fingerprints the raw bytes, not canonical JSON",
	New: hooked(func(*reference.Server) reference.Hooks {
		return reference.Hooks{Request: func(req *reference.ChargeRequest) {
			sum := sha256.Sum256(req.Body)
			req.Fingerprint = sum[:]
		}}
	}),
}
