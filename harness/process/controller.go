package process

import gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"

// GatewayController is the in-process simulator as the runner drives it.
func (e *Env) GatewayController() gatewaysim.Controller { return gatewaysim.Local(e.gw.sim) }
