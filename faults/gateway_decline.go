package faults

import (
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// Decline declines matching charges (402, stored and replayed).
func Decline(m gatewaysim.Match) *Gateway { return &Gateway{Kind: gatewaysim.Decline, Match: m} }

// The gateway fault kind "decline" arms the simulator's Decline rule; it is
// Business: a definitive business answer: it moves no money and makes nothing indeterminate.
func init() { registerGateway("decline", gatewaysim.Decline, history.Business) }
