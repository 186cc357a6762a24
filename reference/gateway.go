package reference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultSource is the payment source sent when the body names none: Stripe's
// always-succeeding test token.
const DefaultSource = "tok_visa"

// DefaultPaymentMethod is what a PaymentIntent is confirmed with: Stripe's
// always-succeeding test PaymentMethod.
const DefaultPaymentMethod = "pm_card_visa"

// GatewayAPI is the Stripe API the reference charges through. Both make
// one money movement per request id, deduplicated by the gateway under
// that id, and both are searched by order for recovery; they differ in
// path and shape only, so the claim protocol is the same with either.
type GatewayAPI string

const (
	// ChargesAPI is POST /v1/charges with source=tok_visa (the default).
	ChargesAPI GatewayAPI = "charges"
	// PaymentIntentsAPI is POST /v1/payment_intents with confirm=true and
	// payment_method=pm_card_visa: created and confirmed in one call, so
	// one request id is still one gateway call. Its success answer is the
	// PaymentIntent; the reference stores the charge it names
	// (latest_charge).
	PaymentIntentsAPI GatewayAPI = "payment_intents"
)

// GatewayAPIs lists the accepted APIs, for help texts and errors.
var GatewayAPIs = []GatewayAPI{ChargesAPI, PaymentIntentsAPI}

// ParseGatewayAPI reads a gateway API name ("" is ChargesAPI).
func ParseGatewayAPI(s string) (GatewayAPI, error) {
	switch api := GatewayAPI(strings.TrimSpace(s)); api {
	case "":
		return ChargesAPI, nil
	case ChargesAPI, PaymentIntentsAPI:
		return api, nil
	}
	return "", fmt.Errorf("unknown gateway API %q (want charges or payment_intents)", s)
}

// path is where the API creates a payment.
func (a GatewayAPI) path() string {
	if a == PaymentIntentsAPI {
		return "/v1/payment_intents"
	}
	return "/v1/charges"
}

// maxGatewayBody bounds how much of a gateway response is read.
const maxGatewayBody = 1 << 20

// OutcomeKind classifies a gateway answer by what it proves about money.
type OutcomeKind int

const (
	// Indeterminate: a 5xx, 409 (the key is in flight at the gateway), 429,
	// a timeout, a reset, an unreadable 2xx, or anything else that does not
	// prove what happened. The claim must stay in progress.
	Indeterminate OutcomeKind = iota
	// Charged: a 2xx carrying a succeeded charge object.
	Charged
	// Declined: a 402 card error. No money moved; stored and replayed.
	Declined
	// Rejected: another 4xx the gateway answers definitively (a bad
	// parameter). No money moved; stored and replayed.
	Rejected
)

func (k OutcomeKind) String() string {
	switch k {
	case Charged:
		return "charged"
	case Declined:
		return "declined"
	case Rejected:
		return "rejected"
	default:
		return "indeterminate"
	}
}

// GatewayCharge is the part of a Stripe charge object the reference reads.
// A PaymentIntent is read into it too, then turned into the charge its
// confirmation made (see charge).
type GatewayCharge struct {
	ID       string            `json:"id"`
	Object   string            `json:"object"`
	Amount   int64             `json:"amount"`
	Currency string            `json:"currency"`
	Status   string            `json:"status"`
	Paid     bool              `json:"paid"`
	Metadata map[string]string `json:"metadata"`
	// LatestCharge is a PaymentIntent's charge; PaymentIntent is the
	// PaymentIntent a charge was made by.
	LatestCharge  string `json:"latest_charge"`
	PaymentIntent string `json:"payment_intent"`
}

// charge is the charge c reports: a charge as it is; a PaymentIntent as
// its latest charge, with the PaymentIntent's amount, currency, status and
// metadata (a confirmed PaymentIntent's charge carries them). The ID is ""
// for a PaymentIntent that was never confirmed: no charge.
func (c GatewayCharge) charge() GatewayCharge {
	if c.Object != "payment_intent" {
		return c
	}
	c.PaymentIntent, c.ID, c.Object, c.LatestCharge = c.ID, c.LatestCharge, "charge", ""
	c.Paid = c.Status == "succeeded"
	return c
}

// GatewayError is a Stripe error object.
type GatewayError struct {
	Type        string `json:"type"`
	Code        string `json:"code"`
	DeclineCode string `json:"decline_code"`
	Message     string `json:"message"`
	Charge      string `json:"charge"`
}

// Outcome is one gateway answer, classified.
type Outcome struct {
	Kind    OutcomeKind
	Status  int            // HTTP status, 0 when no response arrived
	Charge  *GatewayCharge // Charged
	Error   *GatewayError  // the error object of a non-2xx, if it parsed
	Timeout bool           // no answer within the gateway timeout
	Err     error          // why the outcome is indeterminate, for logs
}

// Definitive reports whether the answer settles the charge for good.
func (o Outcome) Definitive() bool { return o.Kind != Indeterminate }

// GatewayRequest is one charge attempt. RequestID is the gateway
// Idempotency-Key: it is recorded with the claim before the first attempt,
// and every attempt for that claim (the owner's, a takeover's, the
// sweeper's) sends the same id and the same parameters, so the gateway
// charges at most once whatever happens in between. The request carries
// it in its metadata too (request_id), where a lookup finds it.
type GatewayRequest struct {
	RequestID string
	// Key, when set, is the Idempotency-Key sent in place of RequestID,
	// and NoKey sends none (Hooks.GatewayKey: a zoo member's own key, or
	// none); the metadata still names RequestID.
	Key   string
	NoKey bool
	ChargeParams
}

// idempotencyKey is the Idempotency-Key the request is sent under ("":
// none).
func (r GatewayRequest) idempotencyKey() string {
	switch {
	case r.NoKey:
		return ""
	case r.Key != "":
		return r.Key
	}
	return r.RequestID
}

// Gateway is a thin client for the payment provider the gateway simulator
// plays: Stripe's charges, or PaymentIntents created with confirm=true,
// Checkout.com's or Adyen's payments (Provider).
type Gateway struct {
	// URL is the gateway base URL, e.g. http://127.0.0.1:12111.
	URL string
	// Provider is the payment provider; "" is StripeProvider, through API.
	Provider GatewayProvider
	// API is the Stripe API charges go through; "" is ChargesAPI. It lives
	// on the client that makes the call, so every server built on the
	// reference (the zoo, the garden) charges through it alike.
	API GatewayAPI
	// APIKey is the service's own secret key at the gateway.
	APIKey string
	// OrderAt is where the order is named on the call (zero:
	// DefaultOrderAt).
	OrderAt OrderAt
	// Timeout bounds one gateway call; past it the outcome is Indeterminate.
	Timeout time.Duration
	// HTTP is the client used; nil means a keep-alive client sized for
	// concurrent use.
	HTTP *http.Client
}

// NewGateway returns a gateway client with its own connection pool.
func NewGateway(baseURL, apiKey string, timeout time.Duration) *Gateway {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 256
	return &Gateway{URL: strings.TrimRight(baseURL, "/"), APIKey: apiKey, Timeout: timeout,
		HTTP: &http.Client{Transport: tr}}
}

// Form is the form-encoded body sent for a charge through api, the
// order named where at says. It is a pure function of the request, so a re-send under the same id carries
// identical parameters (the gateway refuses a key reused with other
// parameters).
func (r GatewayRequest) Form(api GatewayAPI, at OrderAt) url.Values {
	f := url.Values{}
	f.Set("amount", strconv.FormatInt(r.Amount, 10))
	f.Set("currency", r.Currency)
	if api == PaymentIntentsAPI {
		f.Set("confirm", "true")
		f.Set("payment_method", DefaultPaymentMethod)
		f.Set("payment_method_types[0]", "card")
	} else {
		f.Set("source", DefaultSource)
	}
	if r.Description != "" {
		f.Set("description", r.Description)
	}
	at.put(f, r.OrderID)
	f.Set("metadata[request_id]", r.RequestID)
	return f
}

// Charge sends the provider's money-moving call (Stripe: POST /v1/charges
// or /v1/payment_intents with confirm=true) under the idempotency key
// RequestID and classifies the answer. It never returns an error:
// whatever goes wrong is an Indeterminate outcome.
func (g *Gateway) Charge(ctx context.Context, req GatewayRequest) Outcome {
	ctx, cancel := g.withTimeout(ctx)
	defer cancel()
	d := g.dialect()
	hr, err := d.newRequest(ctx, g, req)
	if err != nil {
		return Outcome{Err: fmt.Errorf("gateway request: %w", err)}
	}
	status, body, err := g.do(hr)
	if err != nil {
		return Outcome{Status: status, Err: err, Timeout: isTimeout(ctx, err)}
	}
	return d.classify(status, body)
}

// newRequest is Stripe's: the form to the API's path, Idempotency-Key.
func (a GatewayAPI) newRequest(ctx context.Context, g *Gateway, req GatewayRequest) (*http.Request, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+a.path(),
		strings.NewReader(req.Form(a, g.OrderAt).Encode()))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	hr.Header.Set("Idempotency-Key", req.idempotencyKey())
	return hr, nil
}

func (GatewayAPI) classify(status int, body []byte) Outcome { return Classify(status, body) }

// lookFirst: Stripe keeps every result once execution started, so a
// re-send under the same key learns the outcome.
func (GatewayAPI) lookFirst() bool { return false }

// Classify turns a gateway status and body into an Outcome. A success
// body may be a charge or a PaymentIntent; the outcome names the charge.
func Classify(status int, body []byte) Outcome {
	o := Outcome{Status: status}
	if status >= 200 && status < 300 {
		var c GatewayCharge
		err := json.Unmarshal(body, &c)
		if c = c.charge(); err != nil || c.ID == "" {
			o.Err = fmt.Errorf("gateway %d: unreadable charge", status)
			return o
		}
		o.Charge = &c
		if c.Status != "succeeded" {
			o.Err = fmt.Errorf("gateway %d: charge %s is %q", status, c.ID, c.Status)
			return o
		}
		o.Kind = Charged
		return o
	}
	var e struct {
		Error *GatewayError `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil {
		o.Error = e.Error
	}
	switch {
	case status == http.StatusPaymentRequired:
		o.Kind = Declined
	case status == http.StatusConflict, status == http.StatusTooManyRequests:
		o.Err = fmt.Errorf("gateway %d: retry later", status)
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		// Our own credentials are wrong: an operator fixes them and recovery
		// completes the charge; a client is not told its card failed.
		o.Err = fmt.Errorf("gateway %d: check GATEWAY_API_KEY", status)
	case status == http.StatusBadRequest && o.Error != nil && o.Error.Type == "idempotency_error":
		// The gateway holds this id with other parameters: it may have
		// charged, so this proves nothing about money.
		o.Err = fmt.Errorf("gateway %d: idempotency_error: %s", status, o.Error.Message)
	case status >= 400 && status < 500:
		o.Kind = Rejected
	default:
		o.Err = fmt.Errorf("gateway %d", status)
	}
	return o
}

// FindCharge looks the gateway up for a payment made for orderID under
// requestID. Recovery uses it once the gateway's own idempotency window
// may have passed, when a re-send would no longer be deduplicated, and
// before every re-send on a provider that keeps no result after a 5xx
// (LooksUpFirst). It returns nil, nil when the gateway holds no such
// payment (a PaymentIntent never confirmed made none), and errNoLookup
// on a provider without a lookup.
func (g *Gateway) FindCharge(ctx context.Context, orderID, requestID string) (*GatewayCharge, error) {
	ctx, cancel := g.withTimeout(ctx)
	defer cancel()
	return g.dialect().find(ctx, g, orderID, requestID)
}

// find is Stripe's search (GET /v1/charges/search, or
// /v1/payment_intents/search, by metadata['order_id'], filtered on
// metadata request_id).
func (a GatewayAPI) find(ctx context.Context, g *Gateway, orderID, requestID string) (*GatewayCharge, error) {
	q := url.Values{"query": {g.OrderAt.search(orderID, requestID)}}
	var res struct {
		Data []GatewayCharge `json:"data"`
	}
	if err := g.getJSON(ctx, a.path()+"/search?"+q.Encode(), nil, &res); err != nil {
		return nil, fmt.Errorf("gateway search: %w", err)
	}
	for _, c := range res.Data {
		if c = c.charge(); c.ID != "" && c.Metadata["request_id"] == requestID {
			return &c, nil
		}
	}
	return nil, nil
}

// api is the API charges go through.
func (g *Gateway) api() GatewayAPI {
	if g.API == "" {
		return ChargesAPI
	}
	return g.API
}

func (g *Gateway) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if g.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, g.Timeout)
}

// getJSON GETs path, with the headers given (nil: the bearer token), and
// decodes a 200's body into v.
func (g *Gateway) getJSON(ctx context.Context, path string, header map[string]string, v any) error {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL+path, nil)
	if err != nil {
		return err
	}
	for k, val := range header {
		hr.Header.Set(k, val)
	}
	status, body, err := g.do(hr)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("status %d", status)
	}
	return json.Unmarshal(body, v)
}

// do sends hr with the API key as a bearer token, unless the dialect set
// the provider's own credentials.
func (g *Gateway) do(hr *http.Request) (int, []byte, error) {
	if hr.Header.Get("Authorization") == "" && hr.Header.Get("X-API-Key") == "" {
		hr.Header.Set("Authorization", "Bearer "+g.APIKey)
	}
	client := g.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hr)
	if err != nil {
		return 0, nil, fmt.Errorf("gateway: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxGatewayBody))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("gateway: read body: %w", err)
	}
	return resp.StatusCode, body, nil
}

func isTimeout(ctx context.Context, err error) bool {
	var ne net.Error
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
