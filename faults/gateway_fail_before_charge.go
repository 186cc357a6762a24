package faults

import (
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// FailBeforeCharge answers matching requests with a 500 before any money
// moves; nothing is stored, so a re-send is processed afresh.
func FailBeforeCharge(m gatewaysim.Match) *Gateway {
	return &Gateway{Kind: gatewaysim.FailBeforeCharge, Match: m}
}

// The gateway fault kind "fail_before_charge" arms the simulator's FailBeforeCharge rule; it is
// Disturbs: the answer is indeterminate, but no money moved.
func init() { registerGateway("fail_before_charge", gatewaysim.FailBeforeCharge, history.Disturbs) }
