package gatewaysim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
)

// FuzzProviderPayment: any body to Checkout.com's POST /payments or
// Adyen's POST /v71/payments is a payment (201 or 200, Authorized /
// Authorised or Declined / Refused) or a refusal in the provider's own
// error shape (Checkout.com: 422 {"error_type", "error_codes"}; Adyen:
// 4xx {"status", "errorCode", "errorType"}), never a panic or a 5xx.
func FuzzProviderPayment(f *testing.F) {
	for _, seed := range []struct {
		adyen bool
		body  string
	}{
		{false, `{"amount":100,"currency":"USD","reference":"o","source":{"type":"token","token":"tok_visa"}}`},
		{false, `{"amount":100,"currency":"USD","source":{"type":"card","number":"4000000000000002"}}`},
		{false, `{"amount":1.5,"currency":"USD","source":{"type":"id"}}`},
		{false, `{"source":[1,2],"amount":"100"}`},
		{true, `{"amount":{"value":100,"currency":"EUR"},"reference":"o","merchantAccount":"m","paymentMethod":{"type":"scheme","number":"4111111111111111"}}`},
		{true, `{"amount":{"value":100,"currency":"EUR"},"reference":"o","merchantAccount":"m","paymentMethod":{"type":"scheme","storedPaymentMethodId":"x"}}`},
		{true, `{"amount":100,"reference":{"a":1}}`},
		{true, `not json`},
	} {
		f.Add(seed.adyen, seed.body)
	}
	checkout := gatewaysim.New(gatewaysim.Config{Provider: gatewaysim.ProviderCheckout}).Handler()
	adyen := gatewaysim.New(gatewaysim.Config{Provider: gatewaysim.ProviderAdyen}).Handler()
	f.Fuzz(func(t *testing.T, isAdyen bool, body string) {
		h, path := checkout, "/payments"
		if isAdyen {
			h, path = adyen, "/v71/payments"
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Authorization", "sk_test")
		req.Header.Set("X-API-Key", "AQE_test")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var b map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatalf("%d, body not a JSON object: %q", rec.Code, rec.Body.String())
		}
		codes, _ := b["error_codes"].([]any)
		switch {
		case !isAdyen && rec.Code == 201 && (b["status"] == "Authorized" || b["status"] == "Declined"):
		case !isAdyen && rec.Code == 422 && b["error_type"] == "request_invalid" && len(codes) > 0:
		case isAdyen && rec.Code == 200 && (b["resultCode"] == "Authorised" || b["resultCode"] == "Refused"):
		case isAdyen && rec.Code >= 400 && rec.Code < 500 && b["errorCode"] != nil && b["errorType"] == "validation" && b["status"] == float64(rec.Code):
		default:
			t.Fatalf("adyen %v body %q: %d %s", isAdyen, body, rec.Code, rec.Body.String())
		}
	})
}
