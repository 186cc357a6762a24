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
type GatewayCharge struct {
	ID       string            `json:"id"`
	Object   string            `json:"object"`
	Amount   int64             `json:"amount"`
	Currency string            `json:"currency"`
	Status   string            `json:"status"`
	Paid     bool              `json:"paid"`
	Metadata map[string]string `json:"metadata"`
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
// charges at most once whatever happens in between.
type GatewayRequest struct {
	RequestID string
	ChargeParams
}

// Gateway is a thin client for the Stripe /v1/charges subset the gateway
// simulator serves.
type Gateway struct {
	// URL is the gateway base URL, e.g. http://127.0.0.1:12111.
	URL string
	// APIKey is the service's own secret key at the gateway.
	APIKey string
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

// Form is the form-encoded body sent for a charge. It is a pure function of
// the request, so a re-send under the same id carries identical parameters
// (the gateway refuses a key reused with other parameters).
func (r GatewayRequest) Form() url.Values {
	f := url.Values{}
	f.Set("amount", strconv.FormatInt(r.Amount, 10))
	f.Set("currency", r.Currency)
	f.Set("source", DefaultSource)
	if r.Description != "" {
		f.Set("description", r.Description)
	}
	f.Set("metadata[order_id]", r.OrderID)
	f.Set("metadata[request_id]", r.RequestID)
	return f
}

// Charge sends POST /v1/charges with Idempotency-Key: RequestID and
// classifies the answer. It never returns an error: whatever goes wrong is
// an Indeterminate outcome.
func (g *Gateway) Charge(ctx context.Context, req GatewayRequest) Outcome {
	ctx, cancel := g.withTimeout(ctx)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/v1/charges",
		strings.NewReader(req.Form().Encode()))
	if err != nil {
		return Outcome{Err: fmt.Errorf("gateway request: %w", err)}
	}
	hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	hr.Header.Set("Idempotency-Key", req.RequestID)
	status, body, err := g.do(hr)
	if err != nil {
		return Outcome{Status: status, Err: err, Timeout: isTimeout(ctx, err)}
	}
	return Classify(status, body)
}

// Classify turns a gateway status and body into an Outcome.
func Classify(status int, body []byte) Outcome {
	o := Outcome{Status: status}
	if status >= 200 && status < 300 {
		var c GatewayCharge
		if err := json.Unmarshal(body, &c); err != nil || c.ID == "" {
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

// FindCharge searches the gateway for a charge made for orderID under
// requestID (GET /v1/charges/search by metadata['order_id'], filtered on
// metadata request_id). Recovery uses it once the gateway's own idempotency
// window may have passed, when a re-send would no longer be deduplicated.
// It returns nil, nil when the gateway holds no such charge.
func (g *Gateway) FindCharge(ctx context.Context, orderID, requestID string) (*GatewayCharge, error) {
	ctx, cancel := g.withTimeout(ctx)
	defer cancel()
	q := url.Values{"query": {fmt.Sprintf("metadata['order_id']:'%s'", strings.ReplaceAll(orderID, "'", `\'`))}}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL+"/v1/charges/search?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	status, body, err := g.do(hr)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("gateway search: status %d", status)
	}
	var res struct {
		Data []GatewayCharge `json:"data"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return nil, fmt.Errorf("gateway search: %w", err)
	}
	for i, c := range res.Data {
		if c.Metadata["request_id"] == requestID {
			return &res.Data[i], nil
		}
	}
	return nil, nil
}

func (g *Gateway) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if g.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, g.Timeout)
}

func (g *Gateway) do(hr *http.Request) (int, []byte, error) {
	hr.Header.Set("Authorization", "Bearer "+g.APIKey)
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
