package target_test

import (
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/target"
)

var pay = target.Payment{Amount: 1250, Currency: "usd", OrderID: "ord_1", Description: "idemcheck"}

// ownShape is a service's own request shape: the order in the path, a
// form body with fields the service requires.
const ownShape = `name: x
start: {command: ./s}
policy: {ttl: 1h}
protocol:
  path: /orders/{order_id}/payments
  encoding: form
  body:
    amount: "{{.Amount}}"
    currency: "{{.Currency}}"
    customer: cus_123
    payment_method: pm_card_visa
    metadata:
      order_id: "{{.OrderID}}"
      note: "paid for {{.OrderID}} & more"
`

func parse(t *testing.T, yaml string) *target.Target {
	t.Helper()
	tg, err := target.Parse("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func body(t *testing.T, p target.Protocol, pay target.Payment, w target.Writing) string {
	t.Helper()
	b, err := p.RequestBody(pay, w)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRequest_DefaultIsTheReferenceProtocol: without protocol.body the
// body is the reference protocol's, in the fields' mapping.
func TestRequest_DefaultIsTheReferenceProtocol(t *testing.T) {
	tg := parse(t, "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\n")
	req, err := tg.Protocol.Request(pay, target.Writing{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"amount":1250,"currency":"usd","order_id":"ord_1","description":"idemcheck","metadata":{"cart":{"items":2,"sku":"abc"}}}`
	if string(req.Body) != want || req.Path != "/v1/charges" || req.Method != "POST" || req.ContentType != "application/json" {
		t.Fatalf("%+v\nbody %s\nwant %s", req, req.Body, want)
	}
	stripe := parse(t, "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nprotocol: {fields: {order_id: /metadata/order_id}}\n")
	want = `{"amount":1250,"currency":"usd","metadata":{"order_id":"ord_1","cart":{"items":2,"sku":"abc"}},"description":"idemcheck"}`
	if got := body(t, stripe.Protocol, pay, target.Writing{}); got != want {
		t.Fatalf("nested order: %s\nwant %s", got, want)
	}
}

// TestRequest_OwnShape: placeholders in the path are path-escaped, a form
// body uses bracket keys, and a templated leaf inside text stays text.
func TestRequest_OwnShape(t *testing.T) {
	tg := parse(t, ownShape)
	req, err := tg.Protocol.Request(target.Payment{Amount: 1250, Currency: "usd", OrderID: "ord/1 x"}, target.Writing{})
	if err != nil {
		t.Fatal(err)
	}
	if req.Path != "/orders/ord%2F1%20x/payments" || req.ContentType != "application/x-www-form-urlencoded" {
		t.Fatalf("%+v", req)
	}
	want := "amount=1250&currency=usd&customer=cus_123&payment_method=pm_card_visa&metadata[order_id]=ord%2F1+x&metadata[note]=paid+for+ord%2F1+x+%26+more"
	if string(req.Body) != want {
		t.Fatalf("body %s\nwant %s", req.Body, want)
	}
	if got := tg.Protocol.Writings(); strings.Join(got, ",") != "reordered,rotated" {
		t.Errorf("form writings %v", got)
	}
	rev := body(t, tg.Protocol, pay, target.Writing{Style: "reordered"})
	if !strings.HasPrefix(rev, "metadata[note]=") || !strings.HasSuffix(rev, "&amount=1250") {
		t.Errorf("reordered %s", rev)
	}
	if _, err := tg.Protocol.RequestBody(pay, target.Writing{Style: "whitespace"}); err == nil {
		t.Error("a form body written with whitespace")
	}
}

// TestRequest_JSONWritings: every writing of a JSON template says the
// same document; exponent is offered only when the template has a whole
// number of its own, and never respells the amount.
func TestRequest_JSONWritings(t *testing.T) {
	tg := parse(t, "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nprotocol:\n  body:\n    amount: \"{{.Amount}}\"\n    currency: \"{{.Currency}}\"\n    order: {id: \"{{.OrderID}}\", lines: [{qty: 3, sku: a}]}\n")
	if got := strings.Join(tg.Protocol.Writings(), ","); got != "reordered,whitespace,exponent" {
		t.Fatalf("writings %s", got)
	}
	for style, want := range map[string]string{
		"":           `{"amount":1250,"currency":"usd","order":{"id":"ord_1","lines":[{"qty":3,"sku":"a"}]}}`,
		"reordered":  `{"order":{"lines":[{"sku":"a","qty":3}],"id":"ord_1"},"currency":"usd","amount":1250}`,
		"exponent":   `{"amount":1250,"currency":"usd","order":{"id":"ord_1","lines":[{"qty":3e0,"sku":"a"}]}}`,
		"whitespace": "{\"amount\" : 1250 ,\n  \"currency\" : \"usd\" ,\n  \"order\" : {\"id\" : \"ord_1\" ,\n  \"lines\" : [{\"qty\" : 3 ,\n  \"sku\" : \"a\"}]}}",
	} {
		if got := body(t, tg.Protocol, pay, target.Writing{Style: style}); got != want {
			t.Errorf("%q: %s\nwant %s", style, got, want)
		}
	}
	noWhole := parse(t, "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nprotocol:\n  body: {amount: \"{{.Amount}}\", currency: \"{{.Currency}}\", order_id: \"{{.OrderID}}\"}\n")
	if got := strings.Join(noWhole.Protocol.Writings(), ","); got != "reordered,whitespace" {
		t.Errorf("writings without a number of the template's own: %s", got)
	}
}

// TestRequest_EditChangesOneStaticField: an edit changes exactly the
// static field named, and is refused on a payment's value.
func TestRequest_EditChangesOneStaticField(t *testing.T) {
	tg := parse(t, ownShape)
	var ptrs []string
	for _, f := range tg.Protocol.Template().StaticFields() {
		ptrs = append(ptrs, f.Pointer)
	}
	if strings.Join(ptrs, " ") != "/customer /payment_method" {
		t.Fatalf("static fields %v", ptrs)
	}
	got := body(t, tg.Protocol, pay, target.Writing{Edit: "/customer"})
	if !strings.Contains(got, "customer=cus_123_b&") || strings.Count(got, "_b") != 1 {
		t.Errorf("edited %s", got)
	}
	if _, err := tg.Protocol.RequestBody(pay, target.Writing{Edit: "/metadata/order_id"}); err == nil {
		t.Error("edited the order id as if it were a static field")
	}
	def := parse(t, "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\n")
	if got := body(t, def.Protocol, pay, target.Writing{Edit: "/metadata/cart/items"}); !strings.Contains(got, `"items":3`) {
		t.Errorf("edited number %s", got)
	}
}
