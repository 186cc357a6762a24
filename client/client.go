// Package client is the recording client: it sends charge-protocol requests
// to a chosen replica and records each one's invocation and completion in a
// history. Like etcd's robustness client it never interprets a result
// beyond the three outcomes (ok, fail, info): judging is the checker's job.
//
// It imports only history and target (the protocol dialect); the runner
// (scenarios) drives it.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/target"
)

// RoundRobin as a Request's Replica sends it to the next replica in turn.
const RoundRobin = -1

// maxBody bounds how much of a response the client reads; a payments API
// that answers with more than this is broken in a way worth an error.
const maxBody = 1 << 20

// Client sends requests on behalf of many logical clients and records them.
type Client struct {
	protocol target.Protocol
	rec      *history.Recorder
	urls     []string
	http     *http.Client
	next     atomic.Uint64
}

// New returns a client for the replicas at urls (base URLs, no path).
// timeout bounds one request; it must exceed the target's max_wait plus the
// server's gateway timeout, or a slow honest answer is recorded as info.
func New(p target.Protocol, rec *history.Recorder, urls []string, timeout time.Duration) *Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	return &Client{protocol: p, rec: rec, urls: urls, http: &http.Client{Timeout: timeout, Transport: tr}}
}

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Request is one charge attempt as the generator means it.
type Request struct {
	Client  int    // logical client (timeline lane)
	Replica int    // replica index, or RoundRobin
	Tenant  string // bearer token; "" sends no Authorization header
	Key     string // idempotency key as meant
	// KeyHeader, when non-nil, is sent verbatim instead of Key (quoted
	// sf-string form, empty, over-long); NoKey sends no key header at all.
	KeyHeader *string
	NoKey     bool
	Order     string
	OrderSym  string // the scenario's name for Order, recorded beside it
	Amount    int64
	Currency  string
	// Writing writes the body differently but equally, or with one static
	// field changed (target.Writing); the zero value is the plain body.
	Writing target.Writing
	// Body, when non-nil, is sent verbatim (an incident file's exact
	// bytes) instead of the target's body template, to the path the
	// template gives for Order, Amount and Currency.
	Body    []byte
	Purpose string
}

// Do sends req, waits for the answer (bounded by ctx and the client's
// timeout) and returns the recorded op. A request the target's shape
// cannot write (a writing or edit its body does not have) is recorded as
// indeterminate with the reason, like one that could not be built.
func (c *Client) Do(ctx context.Context, req Request) history.Op {
	op, _ := c.DoBody(ctx, req)
	return op
}

// DoBody is Do that also returns the answer's body as it came (nil when
// none came), for first contact to show where a field really is.
func (c *Client) DoBody(ctx context.Context, req Request) (history.Op, []byte) {
	op, err := c.opFor(req)
	c.rec.Invoke(&op)
	if err != nil {
		op.Outcome, op.Error = history.Info, err.Error()
		return c.rec.Complete(op), nil
	}
	hreq, err := c.build(ctx, req, op)
	if err != nil {
		op.Outcome, op.Error = history.Info, err.Error()
		return c.rec.Complete(op), nil
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		op.Outcome, op.Error = history.Info, err.Error()
		return c.rec.Complete(op), nil
	}
	body := c.readResponse(resp, &op)
	return c.rec.Complete(op), body
}

func (c *Client) opFor(req Request) (history.Op, error) {
	replica := req.Replica
	if replica == RoundRobin || replica < 0 || replica >= len(c.urls) {
		replica = int(c.next.Add(1)-1) % len(c.urls)
	}
	header := req.Key
	if req.KeyHeader != nil {
		header = *req.KeyHeader
	}
	op := history.Op{
		Client: req.Client, Replica: replica, Tenant: req.Tenant,
		Key: req.Key, KeyHeader: header, NoKey: req.NoKey,
		Order: req.Order, OrderSym: req.OrderSym, Amount: req.Amount, Currency: req.Currency,
		Purpose: req.Purpose,
	}
	wire, err := c.Wire(req)
	op.Method, op.Path, op.ContentType, op.Body = wire.Method, wire.Path, wire.ContentType, string(wire.Body)
	return op, err
}

// Description is the description every request carries: fixed, so that
// a retry's body is byte-equal to its first request's.
const Description = "idemcheck"

// Wire is the request as it goes on the wire: the target's request
// shape (path, body template, encoding) for the request's payment,
// written as req.Writing says, or req.Body verbatim.
func (c *Client) Wire(req Request) (target.Request, error) {
	pay := target.Payment{Amount: req.Amount, Currency: req.Currency, OrderID: req.Order, Description: Description}
	if req.Body != nil {
		return target.Request{Method: http.MethodPost, Path: c.protocol.RequestPath(pay),
			ContentType: target.ContentType(c.protocol.Encoding), Body: req.Body}, nil
	}
	return c.protocol.Request(pay, req.Writing)
}

func (c *Client) build(ctx context.Context, req Request, op history.Op) (*http.Request, error) {
	url := c.urls[op.Replica] + op.Path
	hreq, err := http.NewRequestWithContext(ctx, op.Method, url, bytes.NewReader([]byte(op.Body)))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	// net/http silently re-sends a POST that carries an Idempotency-Key
	// when a reused connection drops: a retry the history would never
	// see. Without GetBody the request is not replayable, so every attempt
	// on the wire is one recorded op.
	hreq.GetBody = nil
	hreq.Header.Set("Content-Type", op.ContentType)
	if !req.NoKey {
		// Set the raw value: Header.Set would canonicalise nothing in the
		// value, but we must not drop an empty one either.
		hreq.Header[http.CanonicalHeaderKey(c.protocol.KeyHeader)] = []string{op.KeyHeader}
	}
	if req.Tenant != "" {
		hreq.Header.Set(c.protocol.AuthHeader, c.authValue(req.Tenant))
	}
	return hreq, nil
}

func (c *Client) authValue(tenant string) string {
	if c.protocol.AuthScheme == "none" {
		return tenant
	}
	return c.protocol.AuthScheme + " " + tenant
}

func (c *Client) readResponse(resp *http.Response, op *history.Op) []byte {
	defer resp.Body.Close()
	op.Status = resp.StatusCode
	op.Replayed = resp.Header.Get(c.protocol.ReplayHeader) == "true"
	op.RetryAfter = resp.Header.Get("Retry-After")
	op.Outcome = history.ClassifyAnswer(resp.StatusCode, op.RetryAfter)
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		// The status line arrived but the body did not: the client cannot
		// trust a half-read success, so it is indeterminate.
		op.Outcome, op.Error = history.Info, "read body: "+err.Error()
		return nil
	}
	if op.Outcome == history.OK {
		if err := c.parseSuccess(body, op); err != nil {
			op.Error = err.Error()
		}
	}
	return body
}

// parseSuccess extracts the judged fields of a success body through the
// target's field mapping (a bare name or a JSON pointer). A missing field
// stays empty; the checker judges. An id may be a JSON number: it is kept
// as its decimal text.
func (c *Client) parseSuccess(body []byte, op *history.Op) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("success body is not JSON: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return fmt.Errorf("success body is not a JSON object")
	}
	f := c.protocol.Fields
	return errors.Join(str(doc, f.ID, &op.ChargeID), str(doc, f.Currency, &op.RespCurrency),
		str(doc, f.OrderID, &op.RespOrder), str(doc, f.Status, &op.RespStatus), num(doc, f.Amount, &op.RespAmount))
}

// lookup follows a field mapping into doc; ok is false when a step is
// missing or not an object.
func lookup(doc any, field string) (any, bool) {
	path, err := target.FieldPath(field)
	if err != nil {
		path = []string{field}
	}
	for _, k := range path {
		m, isObj := doc.(map[string]any)
		if !isObj {
			return nil, false
		}
		if doc, isObj = m[k]; !isObj {
			return nil, false
		}
	}
	return doc, true
}

// str reads a string field; a number (a numeric id or order) is kept as
// its decimal text.
func str(doc any, field string, dst *string) error {
	v, ok := lookup(doc, field)
	if !ok || v == nil {
		return nil
	}
	switch v := v.(type) {
	case string:
		*dst = v
	case json.Number:
		*dst = v.String()
	default:
		return fmt.Errorf("success body field %q: expected a string or a number", field)
	}
	return nil
}

func num(doc any, field string, dst *int64) error {
	v, ok := lookup(doc, field)
	if !ok || v == nil {
		return nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return fmt.Errorf("success body field %q: expected an integer", field)
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil || f != float64(int64(f)) {
			return fmt.Errorf("success body field %q: expected an integer", field)
		}
		i = int64(f)
	}
	*dst = i
	return nil
}

// Timeout is the bound of one request.
func (c *Client) Timeout() time.Duration { return c.http.Timeout }
