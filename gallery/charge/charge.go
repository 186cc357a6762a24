// Package charge is the part of every gallery glue that knows nothing of
// idempotency: it reads a charge request of idemcheck's protocol, charges
// it at the gateway (a Stripe-like /v1/charges) and says what to answer.
// The glue around it hands the answer to the web framework under test and
// lets the framework's idempotency middleware do all the rest: this code
// sends no idempotency key to the gateway and keeps nothing between
// requests, so whatever a certification finds is the middleware's.
package charge

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Settings are what a glue reads from its flags and the environment the
// harness gives each replica.
type Settings struct {
	// Storage is the library's storage: "memory" (its default) or "redis"
	// (at RedisURL).
	Storage    string
	RedisURL   string
	ListenAddr string
	// Lifetime is how long the library keeps a key: IDEMPOTENCY_TTL.
	Lifetime time.Duration
}

// Parse reads Settings: --storage, and LISTEN_ADDR, REDIS_URL and
// IDEMPOTENCY_TTL.
func Parse(args []string) (Settings, error) {
	s := Settings{RedisURL: os.Getenv("REDIS_URL"), ListenAddr: os.Getenv("LISTEN_ADDR")}
	fs := flag.NewFlagSet("glue", flag.ContinueOnError)
	fs.StringVar(&s.Storage, "storage", "memory", "memory (the library's default) or redis (REDIS_URL)")
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	if s.Storage != "memory" && s.Storage != "redis" {
		return s, fmt.Errorf("--storage: expected memory or redis, got %q", s.Storage)
	}
	var err error
	if s.Lifetime, err = time.ParseDuration(os.Getenv("IDEMPOTENCY_TTL")); err != nil {
		return s, fmt.Errorf("IDEMPOTENCY_TTL: %w", err)
	}
	return s, nil
}

// Request is the body of POST /v1/charges.
type Request struct {
	Amount      int64  `json:"amount"`
	Currency    string `json:"currency"`
	OrderID     string `json:"order_id"`
	Description string `json:"description"`
}

// Answer is what the handler sends: a status and a JSON body. Err is set
// when the outcome is unknown (the gateway failed or could not be
// reached): a framework handler returns it as its error, as handlers of
// that framework report failures.
type Answer struct {
	Status int
	Body   any
	Err    error
}

// Gateway charges through GATEWAY_URL with GATEWAY_API_KEY.
type Gateway struct {
	URL, APIKey string
	Client      *http.Client
}

// FromEnv reads the gateway's address and key from the environment the
// harness gives each replica. The client timeout exceeds the longest
// gateway latency idemcheck draws (1.5 x max_wait at max_wait 1s).
func FromEnv() Gateway {
	return Gateway{URL: os.Getenv("GATEWAY_URL"), APIKey: os.Getenv("GATEWAY_API_KEY"),
		Client: &http.Client{Timeout: 2 * time.Second}}
}

// Charge handles one request body.
func (g Gateway) Charge(body []byte) Answer {
	var r Request
	if err := json.Unmarshal(body, &r); err != nil || r.OrderID == "" || r.Amount <= 0 || r.Currency == "" {
		return Answer{Status: http.StatusBadRequest, Body: errorBody("invalid_request_error", "amount, currency and order_id are required")}
	}
	f := url.Values{}
	f.Set("amount", strconv.FormatInt(r.Amount, 10))
	f.Set("currency", r.Currency)
	f.Set("source", "tok_visa")
	f.Set("description", r.Description)
	f.Set("metadata[order_id]", r.OrderID)
	req, err := http.NewRequest(http.MethodPost, g.URL+"/v1/charges", strings.NewReader(f.Encode()))
	if err != nil {
		return Answer{Err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+g.APIKey)
	resp, err := g.Client.Do(req)
	if err != nil {
		return Answer{Err: fmt.Errorf("gateway: %w", err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return Answer{Err: fmt.Errorf("gateway: %w", err)}
	}
	return answer(resp.StatusCode, data, r)
}

// answer maps the gateway's answer to the protocol's: a charge is 201, a
// decline 402, any other 4xx is passed on, and anything else is unknown.
func answer(status int, data []byte, r Request) Answer {
	switch {
	case status == http.StatusOK:
		var c struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(data, &c); err != nil || c.ID == "" {
			return Answer{Err: fmt.Errorf("gateway %d: unreadable charge", status)}
		}
		return Answer{Status: http.StatusCreated, Body: map[string]any{
			"id": c.ID, "status": c.Status, "amount": r.Amount, "currency": r.Currency, "order_id": r.OrderID}}
	case status == http.StatusPaymentRequired:
		return Answer{Status: status, Body: errorBody("card_error", "card_declined")}
	case status >= 400 && status < 500 && status != http.StatusConflict && status != http.StatusTooManyRequests:
		return Answer{Status: status, Body: errorBody("invalid_request_error", "the gateway refused the charge")}
	}
	return Answer{Err: fmt.Errorf("gateway answered %d", status)}
}

func errorBody(typ, code string) map[string]any {
	return map[string]any{"error": map[string]string{"type": typ, "code": code}}
}
