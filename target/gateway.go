package target

import (
	"fmt"
	"strings"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// Gateway is the target file's gateway: section, the payment provider
// the server charges through (a gateway simulator profile, see
// gatewaysim.Profiles) and the API of that provider it uses. Default:
// stripe, through charges.
type Gateway struct {
	// Provider is stripe, checkout, adyen or none (a provider without
	// idempotency: Stripe's wire format, every request a new payment).
	Provider string `yaml:"provider"`
	// API is the provider's API the server charges through: charges or
	// payment_intents on stripe (and none), payments on checkout and adyen.
	// Default: the provider's first.
	API string `yaml:"api"`
}

// Profile is the provider profile the target names (stripe when it names
// none); ok is false for an unknown provider, which Validate refuses.
func (g Gateway) Profile() (p gatewaysim.Profile, ok bool) {
	p, err := gatewaysim.ProfileNamed(g.Provider)
	return p, err == nil
}

func (t *Target) gatewayDefaults() {
	g := &t.Gateway
	if g.Provider == "" {
		g.Provider = gatewaysim.ProviderStripe
	}
	p, ok := g.Profile()
	if !ok {
		return
	}
	if g.API == "" {
		g.API = p.APIs[0]
	}
	if pr := &t.Policy.Production; pr.TTL > 0 && pr.ProviderKeyLifetime == 0 && p.Idempotency.Lifetime > 0 {
		pr.ProviderKeyLifetime = p.Idempotency.Lifetime
	}
}

func (t *Target) checkGateway() error {
	g := t.Gateway
	p, ok := g.Profile()
	if !ok {
		return bad("gateway.provider", "unknown provider %q: the profiles are %s", g.Provider, strings.Join(gatewaysim.ProviderNames(), ", "))
	}
	if !p.HasAPI(g.API) {
		return bad("gateway.api", "%s", apiRefusal(p, g.API))
	}
	return nil
}

// apiRefusal says why a provider has no such API, and which it has.
func apiRefusal(p gatewaysim.Profile, api string) string {
	has := strings.Join(p.APIs, " or ")
	for _, other := range gatewaysim.Profiles() {
		if other.Name != p.Name && other.HasAPI(api) && other.Idempotency.Header != "" {
			return fmt.Sprintf("%s is %s's API, not %s's: a server on %s charges through %s (or set gateway.provider: %s)", api, other.Name, p.Name, p.Name, has, other.Name)
		}
	}
	return fmt.Sprintf("%s has no API %q: a server on %s charges through %s", p.Name, api, p.Name, has)
}
