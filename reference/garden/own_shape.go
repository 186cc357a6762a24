package garden

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/zoo"
)

// ownShape is a payment service with its own request shape, as teams
// write them: POST /orders/{order_id}/payments with a form-encoded body
// that must name a customer and a payment method besides the amount and
// currency (customer=cus_123&payment_method=pm_card_visa&…), and a
// success answer that writes the currency in capitals (USD), as some
// glue code does. Its target declares the shape in protocol.path,
// protocol.body and protocol.encoding (examples/own-shape.yaml); a
// harness that could only send its own JSON to one path could not
// certify it, and a checker that compared currencies by case would call
// the capitals a phantom success (M2).
//
// The request becomes the reference's JSON (the order from the path,
// every form field by its bracket path), so the reference's canonical
// fingerprint covers the path's order and every parameter, in any order.
var ownShape = zoo.Variant{
	Name: "own-shape",
	Bug:  "none: its own request shape (POST /orders/{order_id}/payments, a form body requiring customer and payment_method) and a currency answered in capitals",
	New: func(cfg reference.Config) (zoo.Server, error) {
		return newWrapped(cfg, ownShapeDialect)
	},
}

// The service takes payments at /orders/{order_id}/payments.
const ownShapePrefix, ownShapeSuffix = "/orders/", "/payments"

// ownShapeDialect serves the service's own shape with the reference.
func ownShapeDialect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		order, ok := ownShapeOrder(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if status, msg := toReference(r, order); status != 0 {
			writeProblem(w, status, msg)
			return
		}
		rec := &buffered{header: http.Header{}}
		next.ServeHTTP(rec, r)
		rec.flush(w, upperCurrency)
	})
}

// ownShapeOrder returns the order of a POST /orders/{order_id}/payments.
func ownShapeOrder(r *http.Request) (string, bool) {
	rest, ok := strings.CutPrefix(r.URL.Path, ownShapePrefix)
	if !ok || r.Method != http.MethodPost {
		return "", false
	}
	order, ok := strings.CutSuffix(rest, ownShapeSuffix)
	return order, ok && order != "" && !strings.Contains(order, "/")
}

// toReference rewrites a form request for an order into the reference's
// POST /v1/charges with a JSON body. It returns a status and message for
// a request the service refuses (not a form, a required field missing).
func toReference(r *http.Request, order string) (int, string) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return http.StatusUnsupportedMediaType, "expected a form body (application/x-www-form-urlencoded)"
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, reference.MaxBodyBytes+1))
	if err != nil || len(raw) > reference.MaxBodyBytes {
		return http.StatusBadRequest, "the body could not be read"
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return http.StatusBadRequest, "the body is not a form: " + err.Error()
	}
	for _, need := range []string{"customer", "payment_method"} {
		if form.Get(need) == "" {
			return http.StatusBadRequest, need + " is required"
		}
	}
	body := nestForm(form)
	body["order_id"] = order
	out, _ := json.Marshal(body)
	r.URL.Path, r.URL.RawPath = "/v1/charges", ""
	r.Header.Set("Content-Type", "application/json")
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(out)), int64(len(out))
	return 0, ""
}

// nestForm turns bracket keys (metadata[order_id]) into nested objects;
// a whole-number amount becomes a JSON number, as the reference reads it.
func nestForm(form url.Values) map[string]any {
	body := map[string]any{}
	for key, vals := range form {
		path := strings.Split(strings.ReplaceAll(key, "]", ""), "[")
		m := body
		for _, k := range path[:len(path)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[path[len(path)-1]] = vals[0]
	}
	if n, err := strconv.ParseInt(form.Get("amount"), 10, 64); err == nil {
		body["amount"] = n
	}
	return body
}

// upperCurrency writes a success answer's currency in capitals.
func upperCurrency(status int, body []byte) []byte {
	return rewriteSuccess(status, body, func(charge map[string]any) bool {
		cur, ok := charge["currency"].(string)
		charge["currency"] = strings.ToUpper(cur)
		return ok
	})
}

// writeProblem answers a refused request as problem+json.
func writeProblem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"status": status, "title": http.StatusText(status), "detail": detail})
}
