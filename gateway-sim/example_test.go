package gatewaysim_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// post sends a form-encoded charge and returns the response, closed.
func post(base, key, order string) *http.Response {
	form := url.Values{"amount": {"1250"}, "currency": {"usd"}, "source": {"tok_visa"}, "metadata[order_id]": {order}}
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/charges", strings.NewReader(form.Encode()))
	req.Header.Set("Authorization", "Bearer sk_test_example")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return &http.Response{Status: err.Error(), Header: http.Header{}}
	}
	resp.Body.Close()
	return resp
}

// A charge that commits, then loses its response, is still one charge: the
// retry with the same key replays it.
func Example() {
	sim := gatewaysim.New(gatewaysim.Config{Seed: 42})
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	defer sim.Close()

	sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.ChargeThenFail, Match: gatewaysim.Match{OrderID: "ord_1"}, Times: 1})
	first := post(srv.URL, "key-1", "ord_1")
	retry := post(srv.URL, "key-1", "ord_1")

	fmt.Println("first:", first.Status)
	fmt.Println("retry:", retry.Status, "replayed:", retry.Header.Get("Idempotent-Replayed"))
	for _, c := range sim.Ledger() {
		fmt.Println("ledger:", c.OrderID, c.Amount, c.Currency, c.Status)
	}
	// Output:
	// first: 500 Internal Server Error
	// retry: 200 OK replayed: true
	// ledger: ord_1 1250 usd succeeded
}

// The crash window: the harness learns of the withheld response from the
// hold event, can kill the caller, and releases the hold when it is done.
func ExampleSim_WaitEvent() {
	sim := gatewaysim.New(gatewaysim.Config{})
	srv := httptest.NewServer(sim.Handler())
	defer srv.Close()
	defer sim.Close()

	sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.ChargeThenHang, Times: 1})
	answered := make(chan string)
	go func() { answered <- post(srv.URL, "key-2", "ord_2").Status }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hold, err := sim.WaitEvent(ctx, func(ev gatewaysim.Event) bool { return ev.Type == gatewaysim.EventHold })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("charges while the caller waits:", len(sim.Ledger()))
	_ = sim.Release(hold.HoldID)
	fmt.Println("caller finally hears:", <-answered)
	// Output:
	// charges while the caller waits: 1
	// caller finally hears: 200 OK
}
