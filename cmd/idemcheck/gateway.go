package main

import (
	"flag"
	"fmt"

	"github.com/idemcheck/idemcheck/families"
)

// gatewaySwitch is --gateway-idempotency: on, the default (the gateway
// keeps keys as Stripe does, for the provider's share of the target's
// promise), or off (a provider without idempotency: concurrency, payload
// and expiry are judged as usual; crash safety is not judged).
type gatewaySwitch struct{ off bool }

func (s *gatewaySwitch) String() string {
	if s != nil && s.off {
		return "off"
	}
	return "on"
}

func (s *gatewaySwitch) Set(v string) error {
	switch v {
	case "on", "off":
		s.off = v == "off"
		return nil
	}
	return fmt.Errorf("expected on or off, got %q", v)
}

func (s *gatewaySwitch) register(fs *flag.FlagSet) {
	fs.Var(s, "gateway-idempotency", "`on|off`: off runs the gateway without idempotency, like a provider that ignores Idempotency-Key; crash safety (crash-window, L4) is then not judged")
}

// played lists the families a run with this switch plays: with the
// gateway's idempotency off, those that crash servers are not (certify
// reports them not judged), so only the others are asked whether the
// target fits them, and a run left with none of them is refused.
func (s *gatewaySwitch) played(fams []families.Family) ([]families.Family, error) {
	if !s.off {
		return fams, nil
	}
	if len(fams) == 0 {
		fams = families.Default()
	}
	var out []families.Family
	for _, f := range fams {
		if !f.Crashes {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, usageErr("--gateway-idempotency off: every family chosen (%v) crashes servers, which is not judged without an idempotent gateway: nothing to run", families.Names(fams))
	}
	return out, nil
}
