package faults

import (
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// ChargeThenDrop commits the charge and drops the connection unanswered.
func ChargeThenDrop(m gatewaysim.Match) *Gateway {
	return &Gateway{Kind: gatewaysim.ChargeThenDrop, Match: m}
}

// The gateway fault kind "charge_then_drop" arms the simulator's ChargeThenDrop rule; it is
// Crash: money moved and the caller never heard.
func init() { registerGateway("charge_then_drop", gatewaysim.ChargeThenDrop, history.Crash) }
