package gatewaysim_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/paymentintent"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// intentParams is what a service sends to create a PaymentIntent for an
// order, confirmed at once when confirm is true.
func intentParams(order, pm, key string, confirm bool) *stripe.PaymentIntentCreateParams {
	p := &stripe.PaymentIntentCreateParams{
		Amount:             stripe.Int64(1250),
		Currency:           stripe.String(string(stripe.CurrencyUSD)),
		Description:        stripe.String("order " + order),
		PaymentMethodTypes: stripe.StringSlice([]string{"card"}),
	}
	if pm != "" {
		p.PaymentMethod = stripe.String(pm)
	}
	if confirm {
		p.Confirm = stripe.Bool(true)
	}
	p.AddMetadata("order_id", order)
	if key != "" {
		p.SetIdempotencyKey(key)
	}
	return p
}

// wantIntentCharge holds a succeeded PaymentIntent to its one ledger
// entry: the charge it names as latest_charge, recording the
// PaymentIntent.
func (e *env) wantIntentCharge(order string, pi *stripe.PaymentIntent) gatewaysim.Charge {
	e.t.Helper()
	l := e.wantOneCharge(order)
	if pi.Status != stripe.PaymentIntentStatusSucceeded || pi.LatestCharge == nil || pi.LatestCharge.ID != l.ID ||
		l.PaymentIntent != pi.ID || l.Status != gatewaysim.StatusSucceeded || l.Amount != pi.Amount {
		e.t.Fatalf("PaymentIntent %+v (latest charge %+v), ledger %+v", pi, pi.LatestCharge, l)
	}
	return l
}

func TestPaymentIntent_ConfirmOnCreate(t *testing.T) {
	withSim(t, gatewaysim.Config{Seed: 1}, func(e *env) {
		sc, ctx := e.stripeClient(apiKey, 0), context.Background()
		pi, err := sc.V1PaymentIntents.Create(ctx, intentParams("ord_1", "pm_card_visa", "key-1", true))
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		l := e.wantIntentCharge("ord_1", pi)
		if pi.AmountReceived != 1250 || pi.Currency != "usd" || pi.PaymentMethod.ID != "pm_card_visa" || l.Source != "pm_card_visa" || l.IdempotencyKey != "key-1" {
			t.Fatalf("PaymentIntent %+v, ledger %+v", pi, l)
		}
		got, err := sc.V1PaymentIntents.Retrieve(ctx, pi.ID, nil)
		if err != nil || got.Status != stripe.PaymentIntentStatusSucceeded || got.LatestCharge.ID != l.ID {
			t.Fatalf("retrieve = %+v, %v", got, err)
		}
		ch, err := sc.V1Charges.Retrieve(ctx, l.ID, nil)
		if err != nil || ch.PaymentIntent == nil || ch.PaymentIntent.ID != pi.ID || ch.Metadata["order_id"] != "ord_1" {
			t.Fatalf("its charge = %+v, %v", ch, err)
		}
		if _, err := sc.V1PaymentIntents.Retrieve(ctx, pi.ID+"x", nil); !isStripeStatus(err, 404) {
			t.Fatalf("unknown id: %v, want 404", err)
		}
		if _, err := e.stripeClient("sk_test_other", 0).V1PaymentIntents.Retrieve(ctx, pi.ID, nil); !isStripeStatus(err, 404) {
			t.Fatalf("another API key: %v, want 404", err)
		}
	})
}

func isStripeStatus(err error, status int) bool {
	var se *stripe.Error
	return errors.As(err, &se) && se.HTTPStatusCode == status
}

// TestPaymentIntent_CreateThenConfirm runs the two-call flow with
// stripe-go's paymentintent client (paymentintent.New, then Confirm): the
// create moves no money, the confirm makes the one charge, and a second
// confirm is refused.
func TestPaymentIntent_CreateThenConfirm(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		pic := paymentintent.Client{B: e.stripeBackend(0), Key: apiKey}
		p := &stripe.PaymentIntentParams{Amount: stripe.Int64(1250), Currency: stripe.String("usd"), PaymentMethod: stripe.String("pm_card_visa")}
		p.AddMetadata("order_id", "ord_2")
		pi, err := pic.New(p)
		if err != nil || pi.Status != stripe.PaymentIntentStatusRequiresConfirmation || pi.LatestCharge != nil {
			t.Fatalf("create = %+v, %v", pi, err)
		}
		if n := len(e.ledgerFor("ord_2")); n != 0 {
			t.Fatalf("%d ledger entries before the confirm", n)
		}
		done, err := pic.Confirm(pi.ID, nil)
		if err != nil {
			t.Fatalf("confirm: %v", err)
		}
		e.wantIntentCharge("ord_2", done)
		_, err = pic.Confirm(pi.ID, &stripe.PaymentIntentConfirmParams{PaymentMethod: stripe.String("pm_card_visa")})
		var se *stripe.Error
		if !errors.As(err, &se) || se.HTTPStatusCode != 400 || se.Code != stripe.ErrorCodePaymentIntentUnexpectedState ||
			se.PaymentIntent == nil || se.PaymentIntent.Status != stripe.PaymentIntentStatusSucceeded {
			t.Fatalf("second confirm: %+v, want 400 payment_intent_unexpected_state", err)
		}
		e.wantOneCharge("ord_2")
	})
}

func TestPaymentIntent_ConfirmNeedsAPaymentMethod(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		sc, ctx := e.stripeClient(apiKey, 0), context.Background()
		pi, err := sc.V1PaymentIntents.Create(ctx, intentParams("ord_3", "", "", false))
		if err != nil || pi.Status != stripe.PaymentIntentStatusRequiresPaymentMethod {
			t.Fatalf("create = %+v, %v", pi, err)
		}
		_, err = sc.V1PaymentIntents.Confirm(ctx, pi.ID, nil)
		var se *stripe.Error
		if !errors.As(err, &se) || se.HTTPStatusCode != 400 || se.Param != "payment_method" {
			t.Fatalf("confirm without a payment method: %v", err)
		}
		if _, err := sc.V1PaymentIntents.Create(ctx, intentParams("ord_3", "", "", true)); !isStripeStatus(err, 400) {
			t.Fatalf("confirm=true without a payment method: %v", err)
		}
		done, err := sc.V1PaymentIntents.Confirm(ctx, pi.ID, &stripe.PaymentIntentConfirmParams{PaymentMethod: stripe.String("pm_card_visa")})
		if err != nil {
			t.Fatal(err)
		}
		e.wantIntentCharge("ord_3", done)
	})
}

// TestPaymentIntent_Declines: Stripe's declining test PaymentMethods give
// the 402 card_error Stripe gives, carrying the PaymentIntent back in
// requires_payment_method; the decline is a failed ledger entry, stored
// and replayed, and a confirm with another card then succeeds.
func TestPaymentIntent_Declines(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		sc, ctx := e.stripeClient(apiKey, 0), context.Background()
		for _, tc := range []struct {
			order, pm string
			decline   stripe.DeclineCode
		}{
			{"ord_d1", "pm_card_chargeDeclined", "generic_decline"},
			{"ord_d2", "pm_card_chargeDeclinedInsufficientFunds", "insufficient_funds"},
		} {
			p := intentParams(tc.order, tc.pm, "key-"+tc.order, true)
			_, err := sc.V1PaymentIntents.Create(ctx, p)
			se := wantCardDeclined(t, err, tc.decline)
			l := e.wantOneCharge(tc.order)
			pi := se.PaymentIntent
			if pi == nil || pi.Status != stripe.PaymentIntentStatusRequiresPaymentMethod || pi.LatestCharge == nil ||
				pi.LatestCharge.ID != l.ID || pi.LastPaymentError == nil || pi.LastPaymentError.DeclineCode != tc.decline {
				t.Fatalf("%s: the error's PaymentIntent is %+v", tc.order, pi)
			}
			if l.Status != gatewaysim.StatusFailed || se.ChargeID != l.ID || l.PaymentIntent != pi.ID {
				t.Fatalf("%s: ledger %+v, error names charge %q", tc.order, l, se.ChargeID)
			}
			_, err = sc.V1PaymentIntents.Create(ctx, p) // stored and replayed
			if again := wantCardDeclined(t, err, tc.decline); again.PaymentIntent.ID != pi.ID {
				t.Fatalf("replayed decline names %s, want %s", again.PaymentIntent.ID, pi.ID)
			}
			e.wantOneCharge(tc.order)
			done, err := sc.V1PaymentIntents.Confirm(ctx, pi.ID, &stripe.PaymentIntentConfirmParams{PaymentMethod: stripe.String("pm_card_visa")})
			if err != nil || done.Status != stripe.PaymentIntentStatusSucceeded || len(e.ledgerFor(tc.order)) != 2 {
				t.Fatalf("%s: confirm with another card = %+v, %v; ledger %+v", tc.order, done, err, e.ledgerFor(tc.order))
			}
		}
	})
}

func TestPaymentIntent_IdempotentReplay(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		sc, ctx := e.stripeClient(apiKey, 0), context.Background()
		first, err := sc.V1PaymentIntents.Create(ctx, intentParams("ord_4", "pm_card_visa", "key-4", true))
		if err != nil {
			t.Fatal(err)
		}
		again, err := sc.V1PaymentIntents.Create(ctx, intentParams("ord_4", "pm_card_visa", "key-4", true))
		if err != nil || again.ID != first.ID || again.LastResponse.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay = %+v, %v; want %s replayed", again, err, first.ID)
		}
		e.wantIntentCharge("ord_4", again)
		_, err = sc.V1PaymentIntents.Create(ctx, intentParams("ord_other", "pm_card_visa", "key-4", true))
		var se *stripe.Error
		if !errors.As(err, &se) || se.Type != stripe.ErrorTypeIdempotency || se.HTTPStatusCode != 400 {
			t.Fatalf("key reused with other params: %v, want a 400 idempotency_error", err)
		}
		// The key of a create cannot confirm: another route is another request.
		created, err := sc.V1PaymentIntents.Create(ctx, intentParams("ord_5", "pm_card_visa", "key-5", false))
		if err != nil {
			t.Fatal(err)
		}
		cp := &stripe.PaymentIntentConfirmParams{}
		cp.SetIdempotencyKey("key-5")
		if _, err := sc.V1PaymentIntents.Confirm(ctx, created.ID, cp); !errors.As(err, &se) || se.Type != stripe.ErrorTypeIdempotency {
			t.Fatalf("a create's key on a confirm: %v, want idempotency_error", err)
		}
		if n := len(e.ledgerFor("ord_other")) + len(e.ledgerFor("ord_5")); n != 0 {
			t.Fatalf("refused requests moved money: %d ledger entries", n)
		}
	})
}

func TestPaymentIntent_SearchByOrder(t *testing.T) {
	withSim(t, gatewaysim.Config{}, func(e *env) {
		sc, ctx := e.stripeClient(apiKey, 0), context.Background()
		var want []string
		for _, order := range []string{"ord_s", "ord_t", "ord_s"} {
			pi, err := sc.V1PaymentIntents.Create(ctx, intentParams(order, "pm_card_visa", "", true))
			if err != nil {
				t.Fatal(err)
			}
			if order == "ord_s" {
				want = append([]string{pi.ID}, want...) // newest first
			}
		}
		var found []string
		for pi, err := range sc.V1PaymentIntents.Search(ctx, &stripe.PaymentIntentSearchParams{SearchParams: stripe.SearchParams{Query: "metadata['order_id']:'ord_s' AND status:'succeeded'"}}) {
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			found = append(found, pi.ID)
		}
		if len(found) != 2 || found[0] != want[0] || found[1] != want[1] {
			t.Fatalf("search found %v, want %v", found, want)
		}
		it := paymentintent.Client{B: e.stripeBackend(0), Key: apiKey}.Search(&stripe.PaymentIntentSearchParams{SearchParams: stripe.SearchParams{Query: `metadata["order_id"]:"ord_t"`}})
		n := 0
		for it.Next() {
			if pi := it.PaymentIntent(); pi.Metadata["order_id"] != "ord_t" || pi.LatestCharge == nil {
				t.Fatalf("found %+v", pi)
			}
			n++
		}
		if it.Err() != nil || n != 1 {
			t.Fatalf("paymentintent.Search: %d found, %v", n, it.Err())
		}
	})
}
