package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Probe is one readiness check: GET url must answer 2xx. Both modes use it.
func Probe(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// ErrGone is returned by WaitReady when the server went away (its
// process exited) before it was ready.
var ErrGone = errors.New("harness: server gone before it was ready")

// WaitReady probes url every interval until it answers 2xx (nil), gone is
// closed (ErrGone) or ctx ends; then it returns the last probe's error,
// the server's answer rather than our own deadline (context.Cause(ctx)
// says why the wait ended). Both modes wait for replicas and services with it.
func WaitReady(ctx context.Context, url string, every time.Duration, gone <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var last error
	for {
		err := Probe(ctx, client, url)
		if err == nil {
			return nil
		}
		if last == nil || ctx.Err() == nil { // keep the server's answer over our own deadline
			last = err
		}
		select {
		case <-gone:
			return ErrGone
		case <-ctx.Done():
			return last
		case <-tick.C:
		}
	}
}
