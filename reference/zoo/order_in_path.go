package zoo

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/idemcheck/idemcheck/reference"
)

// OrderPathTemplate is the route of a service that takes the order in the
// path only: POST /orders/{order_id}/payments with a JSON body of the
// payment's values (amount, currency, the fields it requires).
const OrderPathTemplate = "/orders/{order_id}/payments"

// orderInPath is a server whose handler serves OrderPathTemplate.
type orderInPath struct{ *reference.Server }

// OrderInPath serves OrderPathTemplate with s: a request for an order
// becomes the reference's POST /v1/charges with the order added to its
// JSON body, so the reference's fingerprint covers the concrete path's
// order. Any other request reaches s unchanged.
func OrderInPath(s *reference.Server) Server { return orderInPath{s} }

// Handler is the reference's handler behind the path rewrite.
func (o orderInPath) Handler() http.Handler {
	next := o.Server.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if order, ok := pathOrder(r); ok {
			moveOrderToBody(r, order)
		}
		next.ServeHTTP(w, r)
	})
}

// pathOrder returns the order of a POST /orders/{order_id}/payments.
func pathOrder(r *http.Request) (string, bool) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/orders/")
	if !ok || r.Method != http.MethodPost {
		return "", false
	}
	order, ok := strings.CutSuffix(rest, "/payments")
	return order, ok && order != "" && !strings.Contains(order, "/")
}

// moveOrderToBody rewrites r to POST /v1/charges with order_id in its
// JSON body. A body that is not a JSON object is passed on as it came,
// for the reference to refuse.
func moveOrderToBody(r *http.Request, order string) {
	r.URL.Path, r.URL.RawPath = "/v1/charges", ""
	raw, err := io.ReadAll(io.LimitReader(r.Body, reference.MaxBodyBytes+1))
	body := map[string]any{}
	if err != nil || json.Unmarshal(raw, &body) != nil || body == nil {
		r.Body = io.NopCloser(bytes.NewReader(raw))
		return
	}
	body["order_id"] = order
	out, _ := json.Marshal(body)
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(out)), int64(len(out))
}
