package faults

import (
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// ChargeThenFail commits the charge and answers 500: money moved, the
// caller was told it did not.
func ChargeThenFail(m gatewaysim.Match) *Gateway {
	return &Gateway{Kind: gatewaysim.ChargeThenFail, Match: m}
}

// The gateway fault kind "charge_then_fail" arms the simulator's ChargeThenFail rule; it is
// Crash: money moved and the caller was told it did not.
func init() { registerGateway("charge_then_fail", gatewaysim.ChargeThenFail, history.Crash) }
