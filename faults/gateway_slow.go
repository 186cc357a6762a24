package faults

import (
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/history"
)

// Slow delays matching requests by d before the gateway decides, with the
// key in flight meanwhile.
func Slow(m gatewaysim.Match, d time.Duration) *Gateway {
	return &Gateway{Kind: gatewaysim.Latency, Match: m, Latency: d}
}

// The gateway fault kind "slow" arms the simulator's Latency rule; it is
// Slows: it only delays the gateway's decision.
func init() { registerGateway("slow", gatewaysim.Latency, history.Slows) }
