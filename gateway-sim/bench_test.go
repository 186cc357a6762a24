package gatewaysim_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// benchClient keeps enough idle connections for RunParallel's goroutines,
// so the benchmark measures the simulator, not TCP handshakes.
func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
}

// benchPost sends one charge over loopback HTTP and reports the status.
func benchPost(c *http.Client, base, body, key string) (int, error) {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/charges", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", formType)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func reportRate(b *testing.B, start time.Time) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkNewCharges: every request a new key and a new ledger entry.
func BenchmarkNewCharges(b *testing.B) {
	withSim(b, gatewaysim.Config{}, func(e *env) {
		c := benchClient()
		var n atomic.Int64
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := strconv.FormatInt(n.Add(1), 10)
				if code, err := benchPost(c, e.srv.URL, chargeForm("ord_"+i, 1250), "key-"+i); err != nil || code != 200 {
					b.Errorf("charge: %d %v", code, err)
					return
				}
			}
		})
		reportRate(b, start)
	})
}

// BenchmarkReplays: every request re-sends one of a few committed keys.
func BenchmarkReplays(b *testing.B) {
	withSim(b, gatewaysim.Config{}, func(e *env) {
		c := benchClient()
		const keys = 64
		for i := range keys {
			if code, err := benchPost(c, e.srv.URL, chargeForm("ord_"+strconv.Itoa(i), 1250), "key-"+strconv.Itoa(i)); err != nil || code != 200 {
				b.Fatalf("seed charge: %d %v", code, err)
			}
		}
		var n atomic.Int64
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := strconv.FormatInt(n.Add(1)%keys, 10)
				if code, err := benchPost(c, e.srv.URL, chargeForm("ord_"+i, 1250), "key-"+i); err != nil || code != 200 {
					b.Errorf("replay: %d %v", code, err)
					return
				}
			}
		})
		reportRate(b, start)
	})
}
