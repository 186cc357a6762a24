package gatewaysim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Client drives a simulator's control API (/_sim/...) over HTTP, for a
// harness whose simulator runs as the cmd/gateway-sim process or in a
// container. Its methods mirror Sim's and return the same sentinel errors.
type Client struct {
	// BaseURL is the simulator's base URL, e.g. http://127.0.0.1:12111.
	BaseURL string
	// HTTP is the client to use; nil means http.DefaultClient. Event streams
	// run until their context ends, so it should have no overall Timeout.
	HTTP *http.Client
}

// NewClient returns a Client for the simulator at baseURL.
func NewClient(baseURL string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/")}
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// do sends one control request and decodes a JSON answer into out (if non-nil).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("gatewaysim: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return decodeSimError(method, path, resp)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// decodeSimError maps a control API error back to its sentinel.
func decodeSimError(method, path string, resp *http.Response) error {
	var body struct {
		Error simError `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	for _, c := range simErrorCodes {
		if c.code == body.Error.Code {
			return fmt.Errorf("gatewaysim: %s %s: %w (%s)", method, path, c.err, body.Error.Message)
		}
	}
	return fmt.Errorf("gatewaysim: %s %s: %s: %s", method, path, resp.Status, body.Error.Message)
}

// Ledger fetches GET /_sim/ledger.
func (c *Client) Ledger(ctx context.Context) ([]Charge, error) {
	var out ledgerJSON
	err := c.do(ctx, http.MethodGet, "/_sim/ledger", nil, &out)
	return out.Charges, err
}

// LastSeq fetches GET /_sim/seq: the Seq of the gateway's latest event.
func (c *Client) LastSeq(ctx context.Context) (int64, error) {
	var out seqJSON
	err := c.do(ctx, http.MethodGet, "/_sim/seq", nil, &out)
	return out.Seq, err
}

// Reset calls POST /_sim/reset.
func (c *Client) Reset(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/_sim/reset", nil, nil)
}

// AddFault installs a fault and returns its id.
func (c *Client) AddFault(ctx context.Context, f Fault) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	err := c.do(ctx, http.MethodPost, "/_sim/faults", f, &out)
	return out.ID, err
}

// RemoveFault uninstalls one fault; ErrUnknownFault if it is not installed.
func (c *Client) RemoveFault(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/_sim/faults/"+url.PathEscape(id), nil, nil)
}

// ClearFaults uninstalls every fault.
func (c *Client) ClearFaults(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "/_sim/faults", nil, nil)
}

// Faults lists the installed faults.
func (c *Client) Faults(ctx context.Context) ([]FaultStatus, error) {
	var out faultsJSON
	err := c.do(ctx, http.MethodGet, "/_sim/faults", nil, &out)
	return out.Faults, err
}

// Release releases one hold ("" releases all); ErrUnknownHold if unknown.
func (c *Client) Release(ctx context.Context, holdID string) error {
	return c.do(ctx, http.MethodPost, "/_sim/release?hold="+url.QueryEscape(holdID), nil, nil)
}

// SetTrace calls PUT /_sim/trace: later requests are attributed by t.
func (c *Client) SetTrace(ctx context.Context, t Trace) error {
	return c.do(ctx, http.MethodPut, "/_sim/trace", t, nil)
}

// Expect calls POST /_sim/expect: e's amount and currency pay for its
// order, under an amount trace.
func (c *Client) Expect(ctx context.Context, e Expectation) error {
	return c.do(ctx, http.MethodPost, "/_sim/expect", e, nil)
}

// Holds lists the withheld responses.
func (c *Client) Holds(ctx context.Context) ([]Hold, error) {
	var out holdsJSON
	err := c.do(ctx, http.MethodGet, "/_sim/holds", nil, &out)
	return out.Holds, err
}

// errStopStream ends StreamEvents without an error.
var errStopStream = errors.New("stop")

// StreamEvents reads the SSE stream from after sequence number since (0:
// everything since the last Reset) and calls fn for each event until fn
// returns false, ctx ends or the stream does.
func (c *Client) StreamEvents(ctx context.Context, since int64, fn func(Event) bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/_sim/events?since="+strconv.FormatInt(since, 10), nil)
	if err != nil {
		return err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("gatewaysim: events: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return decodeSimError(http.MethodGet, "/_sim/events", resp)
	}
	err = readSSE(resp.Body, fn)
	if errors.Is(err, errStopStream) {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("gatewaysim: events: %w", ctx.Err())
	}
	return err
}

// readSSE parses "data:" lines; everything else (ids, pings) is skipped
// because each data line carries its own Seq.
func readSSE(r io.Reader, fn func(Event) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev Event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return fmt.Errorf("gatewaysim: bad event %q: %w", data, err)
		}
		if !fn(ev) {
			return errStopStream
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// WaitEvent returns the first event after since for which pred is true;
// since 0 includes every event since the last Reset, like Sim.WaitEvent.
func (c *Client) WaitEvent(ctx context.Context, since int64, pred func(Event) bool) (Event, error) {
	var found Event
	ok := false
	err := c.StreamEvents(ctx, since, func(ev Event) bool {
		if pred(ev) {
			found, ok = ev, true
		}
		return !ok
	})
	if ok {
		return found, nil
	}
	return Event{}, err
}
