package faults

import (
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// ChargeThenHang commits the charge and withholds the answer until the
// hold is released (Heal releases this rule's holds): the crash window.
func ChargeThenHang(m gatewaysim.Match) *Gateway {
	return &Gateway{Kind: gatewaysim.ChargeThenHang, Match: m}
}

// The gateway fault kind "charge_then_hang" arms the simulator's ChargeThenHang rule; it is
// Crash: money moved while the caller waits, the crash window.
func init() { registerGateway("charge_then_hang", gatewaysim.ChargeThenHang, history.Crash) }
