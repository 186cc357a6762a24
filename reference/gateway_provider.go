package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// GatewayProvider is the payment provider the reference charges through:
// stripe (charges or PaymentIntents, Gateway.API), checkout
// (Checkout.com's POST /payments) or adyen (Adyen's Checkout API). Each is
// a dialect (gateway_<provider>.go): how a request is written and
// authenticated, how its answer is classified, how a payment is looked up,
// and whether a re-send must look first. The claim protocol is the same
// over all of them (flow.go: ask).
type GatewayProvider string

const (
	StripeProvider   GatewayProvider = "stripe"
	CheckoutProvider GatewayProvider = "checkout"
	AdyenProvider    GatewayProvider = "adyen"
)

// GatewayProviders lists the accepted providers, for help texts and errors.
var GatewayProviders = []GatewayProvider{StripeProvider, CheckoutProvider, AdyenProvider}

// ParseGatewayProvider reads a provider name ("" is StripeProvider).
func ParseGatewayProvider(s string) (GatewayProvider, error) {
	switch p := GatewayProvider(strings.TrimSpace(s)); p {
	case "":
		return StripeProvider, nil
	case StripeProvider, CheckoutProvider, AdyenProvider:
		return p, nil
	}
	return "", fmt.Errorf("unknown gateway provider %q (want stripe, checkout or adyen)", s)
}

// gatewayDialect is one provider's side of a gateway call.
type gatewayDialect interface {
	// newRequest writes the money-moving call for req, the order named
	// where at says, with the idempotency key and the credentials.
	newRequest(ctx context.Context, g *Gateway, req GatewayRequest) (*http.Request, error)
	// classify reads the answer.
	classify(status int, body []byte) Outcome
	// find looks up the payment of orderID made under requestID (nil, nil
	// when there is none); errNoLookup when the provider has no lookup.
	find(ctx context.Context, g *Gateway, orderID, requestID string) (*GatewayCharge, error)
	// lookFirst says a re-send must first look the payment up: the
	// provider keeps no result for an answer that was not a 2xx, so the
	// same key would pay again after a 5xx that had moved money.
	lookFirst() bool
}

// errNoLookup is a provider's answer to find when it has no way to look a
// payment up (Adyen's Checkout API): the same request under the same key,
// which the provider keeps, is the way to learn the outcome.
var errNoLookup = errors.New("the provider has no payment lookup")

// dialect is the provider's dialect (for Stripe, the API's).
func (g *Gateway) dialect() gatewayDialect {
	switch g.Provider {
	case CheckoutProvider:
		return checkoutGateway{}
	case AdyenProvider:
		return adyenGateway{}
	}
	return g.api()
}

// LooksUpFirst reports whether a re-send must look the payment up first
// (see gatewayDialect.lookFirst).
func (g *Gateway) LooksUpFirst() bool { return g.dialect().lookFirst() }

// orderFields are the metadata and description at names the order in,
// for the JSON dialects (the form's metadata[KEY] and description).
func orderFields(at OrderAt, orderID, requestID string) (metadata map[string]string, description string) {
	f := url.Values{}
	at.put(f, orderID)
	metadata = map[string]string{"request_id": requestID}
	for k := range f {
		if key, ok := strings.CutPrefix(k, "metadata["); ok {
			metadata[strings.TrimSuffix(key, "]")] = f.Get(k)
		}
	}
	return metadata, f.Get("description")
}

// jsonRequest is a POST of body as JSON to path, with the headers given
// (the provider's credentials and idempotency key).
func jsonRequest(ctx context.Context, g *Gateway, path string, body any, header map[string]string) (*http.Request, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	return hr, nil
}
