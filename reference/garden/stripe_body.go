package garden

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/zoo"
)

// stripeBody speaks a Stripe-shaped dialect: a charge's order lives under
// metadata.order_id, in the request and in the response, and a success
// is a Stripe charge object ({"id", "object": "charge", "amount",
// "currency", "status", "metadata": {"order_id"}}) with no top-level
// order_id. Its target maps protocol.fields.order_id to the JSON pointer
// /metadata/order_id; a checker that reads only flat field names fails it
// for a dialect difference (M2, a money label).
//
// A request with only metadata.order_id gets the top-level order_id the
// reference reads; one that already has it is passed unchanged, so bodies
// that differ in bytes but not in JSON still compare equal.
var stripeBody = zoo.Variant{
	Name: "stripe-body",
	Bug:  "none: Stripe-shaped bodies, the order under metadata.order_id",
	New: func(cfg reference.Config) (zoo.Server, error) {
		return newWrapped(cfg, stripeDialect)
	},
}

// stripeDialect translates requests and responses between the Stripe
// shape and the reference's flat one.
func stripeDialect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		liftOrder(r)
		rec := &buffered{header: http.Header{}}
		next.ServeHTTP(rec, r)
		rec.flush(w, stripeShaped)
	})
}

// liftOrder copies metadata.order_id to the top level when only the
// former is there.
func liftOrder(r *http.Request) {
	if r.Body == nil {
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, reference.MaxBodyBytes+1))
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err != nil {
		return
	}
	var body map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&body) != nil {
		return
	}
	if _, flat := body["order_id"]; flat {
		return
	}
	meta, _ := body["metadata"].(map[string]any)
	order, ok := meta["order_id"].(string)
	if !ok {
		return
	}
	body["order_id"] = order
	if out, err := json.Marshal(body); err == nil {
		r.Body = io.NopCloser(bytes.NewReader(out))
		r.ContentLength = int64(len(out))
	}
}

// stripeShaped turns the reference's success body into a Stripe charge
// object; anything else passes unchanged.
func stripeShaped(status int, body []byte) []byte {
	return rewriteSuccess(status, body, func(charge map[string]any) bool {
		order, ok := charge["order_id"]
		if !ok {
			return false
		}
		delete(charge, "order_id")
		meta, _ := charge["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta["order_id"] = order
		charge["metadata"], charge["object"] = meta, "charge"
		return true
	})
}

// rewriteSuccess applies edit to a 2xx JSON object body and returns it
// re-encoded; an error answer, a body that is not a JSON object, or one
// edit declines (false) passes unchanged.
func rewriteSuccess(status int, body []byte, edit func(map[string]any) bool) []byte {
	if status < 200 || status > 299 {
		return body
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&obj) != nil || obj == nil || !edit(obj) {
		return body
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return body
	}
	return out
}

// buffered holds a response until the wrapper has rewritten its body.
type buffered struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *buffered) Header() http.Header { return b.header }

func (b *buffered) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *buffered) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

func (b *buffered) flush(w http.ResponseWriter, rewrite func(status int, body []byte) []byte) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	out := rewrite(b.status, b.body.Bytes())
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(b.status)
	w.Write(out)
}
