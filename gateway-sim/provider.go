package gatewaysim

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Provider profile names: the payment providers the simulator speaks.
const (
	ProviderStripe   = "stripe"   // Stripe: charges and PaymentIntents (provider_stripe.go)
	ProviderCheckout = "checkout" // Checkout.com: POST /payments (provider_checkout.go)
	ProviderAdyen    = "adyen"    // Adyen Checkout API: POST /v71/payments (provider_adyen.go)
	ProviderNone     = "none"     // Stripe's wire format, no idempotency (provider_none.go)
)

// Idempotency is a provider's idempotency semantics as its public
// documentation gives them: the data the simulator's one flow
// (charge_flow.go) follows, whatever the dialect.
type Idempotency struct {
	// Header is the request header that carries the key; "" for a
	// provider without idempotency (every request is a new payment).
	Header string `json:"header,omitempty"`
	// MaxKey is the longest key the provider takes; a longer one is
	// refused. 0: no documented limit, none enforced.
	MaxKey int `json:"max_key,omitempty"`
	// Lifetime is how long the provider keeps a key from its first
	// request, in production: the default of Config.IdempotencyTTL.
	Lifetime time.Duration `json:"lifetime,omitempty"`
	// KeepsOnlySuccess says only a 2xx answer is kept: after a 4xx or 5xx
	// (also one sent after the money moved, a charge-then-fail) the same
	// key attempts the payment again. Otherwise every result is kept once
	// execution started, errors included.
	KeepsOnlySuccess bool `json:"keeps_only_success,omitempty"`
	// InFlightStatus is the status a duplicate gets while the first
	// request with its key is still being processed.
	InFlightStatus int `json:"in_flight_status,omitempty"`
	// EchoesKey says an answer carries the key back in Header.
	EchoesKey bool `json:"echoes_key,omitempty"`
	// ReplayHeader is the header marking a replayed answer ("" for none).
	ReplayHeader string `json:"replay_header,omitempty"`
}

// Profile is one payment provider as the simulator speaks it.
type Profile struct {
	Name string `json:"name"`
	// Source is the title of the provider documents the profile follows.
	Source string `json:"source"`
	// APIs are the APIs a server may charge through, the first the
	// default ("charges", "payment_intents" for Stripe; "payments").
	APIs        []string    `json:"apis"`
	Idempotency Idempotency `json:"idempotency"`
}

// HasAPI reports whether a server may charge through api on p.
func (p Profile) HasAPI(api string) bool { return slices.Contains(p.APIs, api) }

// dialect is one provider's wire format: its routes, how a request names
// its API key and idempotency key, and how answers and errors are shaped.
// The flow is written once over it; a dialect never branches the flow.
type dialect interface {
	profile() Profile
	// routes registers the provider's API on mux.
	routes(s *Sim, mux *http.ServeMux)
	// apiKey is the account a request is made for; an error is the
	// provider's 401.
	apiKey(r *http.Request) (string, error)
	// idempotencyKey is the request's key ("" when absent), or the error
	// that refuses it (a key longer than the provider takes).
	idempotencyKey(r *http.Request) (string, error)
	// failure renders an error a request step returned; an error that is
	// not the dialect's own is the simulator's bug, answered as an outage.
	failure(err error) *response
	keyReused(key string) *response
	keyInUse(key string) *response
	// outage is the 5xx of a gateway fault (fail before or after charging).
	outage() *response
	// headers sets the provider's answer headers: key echo, replay marker.
	headers(s *Sim, h http.Header, key string, resp *response)
	// paymentID draws the id of a new ledger entry (ch_..., pay_..., a
	// pspReference).
	paymentID(rnd *rand.Rand) string
}

// operation is what one request asks of the gateway, in its dialect: a
// Stripe charge, a PaymentIntent created or confirmed, a Checkout.com or
// Adyen payment. The flow (charge_flow.go) is written once over it.
type operation interface {
	// movesMoney reports whether the request charges; faults apply to
	// these only.
	movesMoney() bool
	// checkLocked runs under Sim.mu after the idempotency lookup; a
	// response refuses the request (nothing stored, nothing charged).
	checkLocked(s *Sim, a *attempt) *response
	// busyLocked marks what the request changes as in use while it waits
	// out latency; idleLocked ends that once the gateway decides.
	busyLocked()
	idleLocked()
	// answerLocked renders the decision. c is the ledger entry being
	// committed, which the operation may complete (the PaymentIntent it
	// confirms); nil when the request moves no money.
	answerLocked(s *Sim, a *attempt, c *Charge) *response
}

// payment is the operation of a request that only pays: it always moves
// money, needs no check beyond its parameters and changes no other object.
// The dialects' payments embed it and render their own answer.
type payment struct{}

func (payment) movesMoney() bool                     { return true }
func (payment) checkLocked(*Sim, *attempt) *response { return nil }
func (payment) busyLocked()                          {}
func (payment) idleLocked()                          {}

// failureOf renders err for a dialect whose own errors are E: E as it
// renders itself, a body the shared reader refused (params.go's
// invalid-request error) as malformed, anything else, a bug in the
// simulator, as outage.
func failureOf[E interface {
	error
	response() *response
}](err error, malformed, outage func() *response) *response {
	var own E
	var shared *apiError
	switch {
	case errors.As(err, &own):
		return own.response()
	case errors.As(err, &shared) && errors.Is(shared, errInvalidParam):
		return malformed()
	}
	return outage()
}

// dialects are the profiles the simulator speaks, by name.
var dialects = map[string]dialect{
	ProviderStripe:   stripeDialect{},
	ProviderCheckout: checkoutDialect{},
	ProviderAdyen:    adyenDialect{},
	ProviderNone:     noneDialect{},
}

// ProviderNames lists the profiles, sorted.
func ProviderNames() []string { return slices.Sorted(maps.Keys(dialects)) }

// Profiles are every provider profile, by name.
func Profiles() []Profile {
	var out []Profile
	for _, n := range ProviderNames() {
		out = append(out, dialects[n].profile())
	}
	return out
}

// ErrUnknownProvider is a provider name no profile has.
var ErrUnknownProvider = fmt.Errorf("gatewaysim: unknown provider")

// ProfileNamed is the profile called name ("" is stripe); the error lists
// the profiles there are.
func ProfileNamed(name string) (Profile, error) {
	d, err := dialectNamed(name)
	if err != nil {
		return Profile{}, err
	}
	return d.profile(), nil
}

func dialectNamed(name string) (dialect, error) {
	if name == "" {
		name = ProviderStripe
	}
	d, ok := dialects[name]
	if !ok {
		return nil, fmt.Errorf("%w %q: want one of %s", ErrUnknownProvider, name, strings.Join(ProviderNames(), ", "))
	}
	return d, nil
}

// keeps reports whether the key keeps the decision resp: a provider that
// keeps every result keeps it; one that keeps only 2xx keeps it only when
// its caller is told success (resp is 2xx and no post-commit fault
// replaces it with a 5xx).
func (p Idempotency) keeps(resp *response, sent FaultKind) bool {
	if !p.KeepsOnlySuccess {
		return true
	}
	return sent != ChargeThenFail && resp.status >= 200 && resp.status < 300
}
