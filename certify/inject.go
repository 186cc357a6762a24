package certify

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/scenarios"
)

// Injector adapts an environment to the runner's fault steps: toxics and
// "down" on toxiproxy links, and gateway faults on the simulator.
func Injector(env Env) scenarios.Injector {
	var seq atomic.Int64
	return func(ctx context.Context, f scenarios.Fault, order string) (func(context.Context) error, error) {
		if kind, ok := strings.CutPrefix(f.Kind, "gateway:"); ok {
			return injectGateway(env.GatewayController(), kind, f, order)
		}
		link, err := harness.ParseLink(f.Link)
		if err != nil {
			return nil, fmt.Errorf("fault %s: %w", f.ID, err)
		}
		if f.Kind == "down" {
			if err := env.SetLinkEnabled(link, false); err != nil {
				return nil, err
			}
			return func(context.Context) error { return env.SetLinkEnabled(link, true) }, nil
		}
		tox, err := toxic(f, fmt.Sprintf("%s_%d", f.ID, seq.Add(1)))
		if err != nil {
			return nil, err
		}
		if err := env.AddToxic(link, tox); err != nil {
			return nil, err
		}
		return func(ctx context.Context) error { return env.RemoveToxic(ctx, link, tox.Name) }, nil
	}
}

// toxic converts a scenario fault into a toxiproxy toxic, durations in
// toxiproxy's milliseconds.
func toxic(f scenarios.Fault, name string) (harness.Toxic, error) {
	dir := harness.Downstream
	if f.Direction == "upstream" {
		dir = harness.Upstream
	}
	attrs := map[string]any{}
	ms := func(key, def string) error {
		v := f.Params[key]
		if v == "" {
			v = def
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("fault %s: params.%s: expected a duration, got %q", f.ID, key, v)
		}
		attrs[key] = d.Milliseconds()
		return nil
	}
	num := func(key string, def int64) error {
		v, err := strconv.ParseInt(cmp.Or(f.Params[key], strconv.FormatInt(def, 10)), 10, 64)
		if err != nil {
			return fmt.Errorf("fault %s: params.%s: expected an integer, got %q", f.ID, key, f.Params[key])
		}
		attrs[key] = v
		return nil
	}
	var err error
	switch f.Kind {
	case "latency":
		err = ms("latency", "200ms")
	case "timeout", "reset_peer":
		err = ms("timeout", "0s")
	case "slicer":
		err = num("average_size", 8)
	case "limit_data":
		err = num("bytes", 64)
	case "bandwidth":
		err = num("rate", 1)
	default:
		err = fmt.Errorf("fault %s: unknown kind %q", f.ID, f.Kind)
	}
	return harness.Toxic{Name: name, Type: f.Kind, Direction: dir, Attributes: attrs}, err
}

// injectGateway adds a fault to the simulator, matched by order when the
// scenario names one.
func injectGateway(sim gatewaysim.Controller, kind string, f scenarios.Fault, order string) (func(context.Context) error, error) {
	gf := gatewaysim.Fault{Kind: gatewaysim.FaultKind(kind), Match: gatewaysim.Match{OrderID: order}}
	if kind == "slow" {
		gf.Kind, gf.Latency = gatewaysim.Latency, 200*time.Millisecond
	}
	if v := f.Params["latency"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("fault %s: params.latency: expected a duration, got %q", f.ID, v)
		}
		gf.Latency = d
	}
	if v := f.Params["times"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("fault %s: params.times: expected an integer, got %q", f.ID, v)
		}
		gf.Times = n
	}
	id := sim.AddFault(gf)
	return func(context.Context) error { sim.RemoveFault(id); return nil }, nil
}
