package harness

import gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"

// GatewayController is the in-process simulator as the runner drives it.
func (e *Env) GatewayController() gatewaysim.Controller { return e.gw.sim }
