package zoo

import (
	"encoding/json"

	"github.com/idemcheck/idemcheck/reference"
)

// routeTemplateKey takes payments at OrderPathTemplate, the order in the
// path only, and claims keys, charges and recovers like the reference;
// but the request a key is bound to is the route template and the body,
// not the concrete path: its fingerprint leaves the path's order out. The
// same key and the same body sent for another order (another resource
// under one route) are taken for a retry of the first, and answered with
// the first order's charge: the second order was never charged and is
// told it was paid.
//
// Incident (RamaAditya49/titen#37): the idempotency record was keyed by
// organisation, route template and key, and the request hash was
// body-based, so one key and body on two concrete resources replayed the
// first resource's response for the second (P1, found by key-reuse's
// different order, which changes only the path here).
var routeTemplateKey = Variant{
	Name: "route-template-key",
	Bug:  "binds a key to the route template and the body, not the concrete path: the same key and body for another order replays the first order's charge",
	New: serving(OrderInPath, func(*reference.Server) reference.Hooks {
		return reference.Hooks{Request: func(req *reference.ChargeRequest) { req.Fingerprint = templateFingerprint(req.Canonical) }}
	}),
}

// templateFingerprint fingerprints a charge body under the route template,
// without the order the path carried.
func templateFingerprint(canonical []byte) []byte {
	var body map[string]any
	if json.Unmarshal(canonical, &body) == nil && body != nil {
		delete(body, "order_id")
		if out, err := json.Marshal(body); err == nil {
			if c, err := reference.Canonicalize(out); err == nil {
				canonical = c
			}
		}
	}
	return reference.Fingerprint("POST", OrderPathTemplate, canonical)
}
