package zoo

import "github.com/idemcheck/idemcheck/reference"

// globalKeys stores keys in one namespace for every tenant, as a service
// that started single-tenant does: the primary key is the idempotency key
// alone.
//
// Incident: two merchants whose clients generate keys the same way (order
// numbers, counters) collide, and one merchant's customer receives the
// other merchant's charge (M5, found by tenants).
var globalKeys = Variant{
	Name: "global-keys",
	Bug:  "keys are not scoped per tenant",
	New: hooked(func(*reference.Server) reference.Hooks {
		return reference.Hooks{Request: func(req *reference.ChargeRequest) { req.Tenant = "global" }}
	}),
}
