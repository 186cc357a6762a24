package target_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/target"
)

const gatewayShape = "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\n"

func TestGateway_DefaultIsStripeCharges(t *testing.T) {
	tg, err := target.Parse("g.yaml", []byte(gatewayShape))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Gateway != (target.Gateway{Provider: "stripe", API: "charges"}) {
		t.Fatalf("gateway = %+v, want stripe charges", tg.Gateway)
	}
}

func TestGateway_EachProfile(t *testing.T) {
	for _, c := range []struct{ yaml, provider, api string }{
		{"gateway: {provider: stripe, api: payment_intents}\n", "stripe", "payment_intents"},
		{"gateway: {provider: checkout}\n", "checkout", "payments"},
		{"gateway:\n  provider: adyen\n  api: payments\n", "adyen", "payments"},
		{"gateway: {provider: none}\n", "none", "charges"},
	} {
		tg, err := target.Parse("g.yaml", []byte(gatewayShape+c.yaml))
		if err != nil {
			t.Fatalf("%s: %v", c.yaml, err)
		}
		if tg.Gateway.Provider != c.provider || tg.Gateway.API != c.api {
			t.Errorf("%s: gateway = %+v", c.yaml, tg.Gateway)
		}
		if p, ok := tg.Gateway.Profile(); !ok || p.Name != c.provider {
			t.Errorf("%s: profile %+v", c.yaml, p)
		}
	}
}

// A declared production TTL gets the named provider's key lifetime:
// Adyen keeps keys at least 31 days.
func TestGateway_ProductionLifetimeIsTheProvidersOwn(t *testing.T) {
	tg, err := target.Parse("g.yaml", []byte("name: x\nstart: {command: ./s}\npolicy:\n  ttl: 1s\n  production: {ttl: 720h}\ngateway: {provider: adyen}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tg.Policy.Production.ProviderKeyLifetime; got != 31*24*time.Hour {
		t.Fatalf("provider key lifetime %s, want Adyen's 31 days", got)
	}
}

func TestGateway_BadInput(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown provider", gatewayShape + "gateway: {provider: braintree}\n",
			`bad.yaml:4: gateway.provider: unknown provider "braintree": the profiles are adyen, checkout, none, stripe`},
		{"payment_intents on adyen", gatewayShape + "gateway:\n  provider: adyen\n  api: payment_intents\n",
			"bad.yaml:6: gateway.api: payment_intents is stripe's API, not adyen's: a server on adyen charges through payments (or set gateway.provider: stripe)"},
		{"unknown api", gatewayShape + "gateway: {provider: stripe, api: refunds}\n",
			`bad.yaml:4: gateway.api: stripe has no API "refunds": a server on stripe charges through charges or payment_intents`},
		{"unknown field", gatewayShape + "gateway: {provder: stripe}\n", "bad.yaml:4:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := target.Parse("bad.yaml", []byte(c.yaml))
			if err == nil || !errors.Is(err, target.ErrInvalid) {
				t.Fatalf("error %v, want ErrInvalid", err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error = %q, want prefix %q", err, c.want)
			}
		})
	}
}
