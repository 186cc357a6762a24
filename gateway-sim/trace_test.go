package gatewaysim_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// chargeWith posts a form charge with the given extra parameters.
func (e *env) chargeWith(key string, amount int, extra url.Values) reply {
	e.t.Helper()
	v := url.Values{"amount": {itoa(amount)}, "currency": {"usd"}, "source": {"tok_visa"}}
	for k, vs := range extra {
		v[k] = vs
	}
	return e.request(http.MethodPost, "/v1/charges", apiKey, formType, v.Encode(), idemHeader(key)...)
}

func TestTrace_AttributesWhereTheServiceNamesTheOrder(t *testing.T) {
	cases := []struct {
		trace string
		extra url.Values
	}{
		{"metadata[shop_order]", url.Values{"metadata[shop_order]": {"ord_7"}, "metadata[order_id]": {"other"}}},
		{"description:Order {order_id} for Ann", url.Values{"description": {"Order ord_7 for Ann"}}},
		{"description:{order_id}", url.Values{"description": {"ord_7"}}},
	}
	for _, c := range cases {
		t.Run(c.trace, func(t *testing.T) {
			tr, err := gatewaysim.ParseTrace(c.trace)
			if err != nil {
				t.Fatal(err)
			}
			if tr.String() != c.trace {
				t.Fatalf("String() = %q, want %q", tr.String(), c.trace)
			}
			withSim(t, gatewaysim.Config{Trace: tr}, func(e *env) {
				// A fault aimed at the order finds it where the trace says.
				if _, err := gatewaysim.Local(e.sim).AddFault(orderFault(gatewaysim.Decline, "ord_7")); err != nil {
					t.Fatal(err)
				}
				if r := e.chargeWith("k1", 1250, c.extra); r.status != http.StatusPaymentRequired {
					t.Fatalf("status %d, want the decline aimed at ord_7: %s", r.status, r.body)
				}
				if got := e.wantOneCharge("ord_7"); got.Status != gatewaysim.StatusFailed {
					t.Fatalf("ledger entry %+v, want the decline", got)
				}
				wantTypes(t, e.eventTypes("ord_7"), gatewaysim.EventFault, gatewaysim.EventDecline)
			})
		})
	}
}

func TestTrace_DescriptionThatDoesNotMatchNamesNoOrder(t *testing.T) {
	tr, _ := gatewaysim.ParseTrace("description:Order {order_id}.")
	withSim(t, gatewaysim.Config{Trace: tr}, func(e *env) {
		for _, d := range []string{"Order ord_7", "order ord_7.", "Order ."} {
			e.chargeWith("", 100, url.Values{"description": {d}})
		}
		for _, c := range e.sim.Ledger() {
			if c.OrderID != "" {
				t.Errorf("description %q attributed to %q, want no order", c.Description, c.OrderID)
			}
		}
	})
}

func TestTrace_AmountAttributesByAmountAndCurrency(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		c := gatewaysim.NewClient(e.ctl.URL)
		ctx := context.Background()
		if err := c.SetTrace(ctx, gatewaysim.Trace{Amount: true}); err != nil {
			t.Fatal(err)
		}
		if err := c.Expect(ctx, gatewaysim.Expectation{Order: "ord_a", Amount: 1001, Currency: "usd"}); err != nil {
			t.Fatal(err)
		}
		if err := c.Expect(ctx, gatewaysim.Expectation{Order: "ord_b", Amount: 1001, Currency: "usd"}); !errors.Is(err, gatewaysim.ErrInvalidTrace) {
			t.Fatalf("a second order on one amount: %v, want ErrInvalidTrace", err)
		}
		e.chargeWith("k1", 1001, nil)
		e.chargeWith("k2", 1002, nil)
		e.wantOneCharge("ord_a")
		if n := len(e.ledgerFor("")); n != 1 {
			t.Fatalf("%d charges with no order, want the one whose amount nobody expected", n)
		}
		e.sim.Reset()
		if got := e.sim.Trace(); !got.Amount {
			t.Fatalf("trace after a reset: %v, want amount", got)
		}
		e.chargeWith("k3", 1001, nil)
		if n := len(e.ledgerFor("")); n != 1 {
			t.Fatal("a reset keeps the expected amounts: the charge after it was attributed")
		}
	})
}

func TestTrace_BadTracesAreRefused(t *testing.T) {
	for _, s := range []string{"", "metadata[]", "description:Order", "description:{order_id} {order_id}", "meta[x]", "amounts"} {
		if _, err := gatewaysim.ParseTrace(s); !errors.Is(err, gatewaysim.ErrInvalidTrace) {
			t.Errorf("ParseTrace(%q) = %v, want ErrInvalidTrace", s, err)
		}
	}
	withSim(t, gatewaysim.Config{}, func(e *env) {
		c := gatewaysim.NewClient(e.ctl.URL)
		err := c.SetTrace(context.Background(), gatewaysim.Trace{Metadata: "a", Amount: true})
		if !errors.Is(err, gatewaysim.ErrInvalidTrace) {
			t.Fatalf("two places: %v, want ErrInvalidTrace", err)
		}
		if got := e.sim.Trace(); got != gatewaysim.DefaultTrace {
			t.Fatalf("a refused trace changed it to %v", got)
		}
	})
}

func TestTrace_FindTraceReadsWhereTheChargeNamesTheOrder(t *testing.T) {
	cases := []struct {
		c    gatewaysim.Charge
		want string
	}{
		{gatewaysim.Charge{Metadata: map[string]string{"order_id": "ord_1", "shop_order": "ord_1"}}, "metadata[order_id]"},
		{gatewaysim.Charge{Metadata: map[string]string{"z": "ord_1", "shop_order": "ord_1"}}, "metadata[shop_order]"},
		{gatewaysim.Charge{Metadata: map[string]string{"request_id": "req_1"}, Description: "Order ord_1 (web)"}, "description:Order {order_id} (web)"},
		{gatewaysim.Charge{Description: "ord_1 then ord_1"}, "amount"},
		{gatewaysim.Charge{Metadata: map[string]string{"request_id": "req_1"}}, "amount"},
	}
	for _, c := range cases {
		got := gatewaysim.FindTrace(c.c, "ord_1")
		if got.String() != c.want {
			t.Errorf("FindTrace(%+v) = %s, want %s", c.c, got, c.want)
		}
		if !got.Amount && got.Order(c.c.Metadata, c.c.Description) != "ord_1" {
			t.Errorf("the trace found, %s, does not read ord_1 back from the charge", got)
		}
	}
}

func TestTrace_Reference(t *testing.T) {
	tr, err := gatewaysim.ParseTrace("reference")
	if err != nil || !tr.Reference || tr.String() != "reference" {
		t.Fatalf("ParseTrace(reference) = %+v, %v", tr, err)
	}
	if err := (gatewaysim.Trace{Reference: true, Amount: true}).Validate(); !errors.Is(err, gatewaysim.ErrInvalidTrace) {
		t.Fatalf("reference and amount: %v, want ErrInvalidTrace", err)
	}
	c := gatewaysim.Charge{Reference: "ord_1", Metadata: map[string]string{"shop": "ord_1"}}
	got := gatewaysim.FindTrace(c, "ord_1")
	if !got.Reference || got.OrderOf(c) != "ord_1" {
		t.Fatalf("FindTrace = %s, want reference (before other metadata keys)", got)
	}
	if got := gatewaysim.FindTrace(gatewaysim.Charge{Reference: "ord_1", Metadata: map[string]string{"order_id": "ord_1"}}, "ord_1"); got != gatewaysim.DefaultTrace {
		t.Fatalf("FindTrace = %s, want metadata[order_id] first", got)
	}
}
