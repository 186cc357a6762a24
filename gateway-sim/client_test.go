package gatewaysim_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// The Client drives a remote simulator through the crash window exactly as
// the in-process API does.
func TestClient_CrashWindowRemotely(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		c := gatewaysim.NewClient(e.ctl.URL + "/")
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		defer cancel()
		id, err := c.AddFault(ctx, orderFault(gatewaysim.ChargeThenHang, "ord_c"))
		if err != nil {
			t.Fatal(err)
		}
		held := make(chan reply, 1)
		go func() {
			r, _ := e.do(e.srv.Client(), http.MethodPost, "/v1/charges", apiKey, formType, chargeForm("ord_c", 100), "Idempotency-Key", "kc")
			held <- r
		}()
		hold, err := c.WaitEvent(ctx, 0, ofType(gatewaysim.EventHold))
		if err != nil {
			t.Fatal(err)
		}
		ledger, err := c.Ledger(ctx)
		if err != nil || len(ledger) != 1 || ledger[0].ID != hold.ChargeID || ledger[0].IdempotencyKey != "kc" {
			t.Fatalf("ledger %+v, %v", ledger, err)
		}
		if holds, err := c.Holds(ctx); err != nil || len(holds) != 1 {
			t.Fatalf("holds %+v, %v", holds, err)
		}
		if fs, err := c.Faults(ctx); err != nil || len(fs) != 1 || fs[0].ID != id || fs[0].Fired != 1 {
			t.Fatalf("faults %+v, %v", fs, err)
		}
		if err := c.Release(ctx, hold.HoldID); err != nil {
			t.Fatal(err)
		}
		if r := <-held; r.chargeID() != hold.ChargeID {
			t.Fatalf("held caller got %s", r.body)
		}
		if err := c.Release(ctx, hold.HoldID); !errors.Is(err, gatewaysim.ErrUnknownHold) {
			t.Fatalf("release again: %v", err)
		}
		if err := c.RemoveFault(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := c.RemoveFault(ctx, id); !errors.Is(err, gatewaysim.ErrUnknownFault) {
			t.Fatalf("remove again: %v", err)
		}
		if _, err := c.AddFault(ctx, gatewaysim.Fault{Kind: "nope"}); !errors.Is(err, gatewaysim.ErrInvalidFault) {
			t.Fatalf("invalid fault: %v", err)
		}
		if err := c.ClearFaults(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.Reset(ctx); err != nil {
			t.Fatal(err)
		}
		if l, _ := c.Ledger(ctx); len(l) != 0 {
			t.Fatalf("after reset: %+v", l)
		}
	})
}

func TestClient_StreamEndsWithContext(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		c := gatewaysim.NewClient(e.ctl.URL)
		ctx, cancel := context.WithCancel(context.Background())
		e.charge("", "ord_s", 100)
		n := 0
		err := c.StreamEvents(ctx, 0, func(ev gatewaysim.Event) bool {
			n++
			cancel() // end the stream from inside, after the first event
			return true
		})
		if !errors.Is(err, context.Canceled) || n < 1 {
			t.Fatalf("err %v after %d events", err, n)
		}
	})
}

func TestClient_StreamEndsWhenSimCloses(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		c := gatewaysim.NewClient(e.ctl.URL)
		e.charge("", "ord_s", 100)
		err := c.StreamEvents(context.Background(), 0, func(gatewaysim.Event) bool {
			e.sim.Close()
			return true
		})
		if err == nil {
			t.Fatal("a stream ended by the server reported no error")
		}
	})
}
