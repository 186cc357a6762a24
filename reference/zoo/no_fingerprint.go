package zoo

import "github.com/idemcheck/idemcheck/reference"

// noFingerprint claims keys atomically like the reference but never
// compares the request body with the one first sent under the key: a key
// is treated as a response cache.
//
// Incident: a client that reuses a key for a different order (a bug in its
// key generation) is told the second order was paid, with the first
// order's charge (P1, found by key-reuse).
var noFingerprint = Variant{
	Name: "no-fingerprint",
	Bug:  "never compares the body: a reused key with a different body gets the first answer",
	New: hooked(func(*reference.Server) reference.Hooks {
		// Every body gets one fingerprint, so none is ever found to differ.
		return reference.Hooks{Request: func(req *reference.ChargeRequest) { req.Fingerprint = []byte("any body") }}
	}),
}
