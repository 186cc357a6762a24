package openapi_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/target"
	"github.com/idemcheck/idemcheck/target/openapi"
)

// initTarget runs Init and loads what it wrote with the project's loader.
func initTarget(t *testing.T, opts openapi.Options) (*target.Target, *openapi.Result) {
	t.Helper()
	res, err := openapi.Init(opts)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	tg, err := target.Parse("init.yaml", res.YAML)
	if err != nil {
		t.Fatalf("the written file does not load: %v\n%s", err, res.YAML)
	}
	return tg, res
}

// request renders the target's request for one payment.
func request(t *testing.T, tg *target.Target) target.Request {
	t.Helper()
	r, err := tg.Protocol.Request(target.Payment{Amount: 1250, Currency: "usd", OrderID: "ord 7", Description: "d"}, target.Writing{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// writeSpec writes a document into a temporary folder and returns its path.
func writeSpec(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInit_TemplateLoads(t *testing.T) {
	tg, res := initTarget(t, openapi.Options{})
	if tg.Name != "my-server" || tg.Start.Command != "./your-server" {
		t.Errorf("name %q, start.command %q: want the template's placeholders", tg.Name, tg.Start.Command)
	}
	if !strings.Contains(string(res.YAML), "idemcheck doctor --target") || !strings.Contains(string(res.YAML), "# customer: cus_123") {
		t.Errorf("the template lacks its comments:\n%s", res.YAML)
	}
	r := request(t, tg)
	if r.Path != "/v1/charges" || string(r.Body) != `{"amount":1250,"currency":"usd","order_id":"ord 7","description":"d"}` {
		t.Errorf("request %s %s", r.Path, r.Body)
	}
}

func TestInit_CommandFillsStart(t *testing.T) {
	tg, _ := initTarget(t, openapi.Options{Name: "svc", Command: `./bin/server --flag='a b' "--ttl={{.TTL}}" x\ y`})
	want := []string{"--flag=a b", "--ttl={{.TTL}}", "x y"}
	if tg.Name != "svc" || tg.Start.Command != "./bin/server" || !slices.Equal(tg.Start.Args, want) {
		t.Errorf("name %q, command %q args %q; want svc, ./bin/server %q", tg.Name, tg.Start.Command, tg.Start.Args, want)
	}
	r, err := tg.Render(target.Vars{TTL: 3e9, ListenAddr: "127.0.0.1:9"})
	if err != nil || r.Args[1] != "--ttl=3s" {
		t.Errorf("rendered args %q, %v", r.Args, err)
	}
}

func TestInit_CommandRelativeToTheFile(t *testing.T) {
	cases := []struct{ cmd, work, out, want string }{
		{"./bin/server", "/repo", "targets/t.yaml", "../bin/server"},
		{"./bin/server", "/repo", "/repo/targets/t.yaml", "../bin/server"},
		{"./server", "/repo", "t.yaml", "./server"},
		{"bin/server", "/repo", "/elsewhere/deep/down/t.yaml", "/repo/bin/server"},
		{"python3", "/repo", "targets/t.yaml", "python3"},
		{"/usr/bin/srv", "/repo", "targets/t.yaml", "/usr/bin/srv"},
		{"./bin/server", "/repo", "", "./bin/server"},
	}
	for _, c := range cases {
		tg, _ := initTarget(t, openapi.Options{Command: c.cmd + " --x", WorkDir: c.work, Out: c.out})
		if tg.Start.Command != c.want {
			t.Errorf("%s typed in %s, file in %s: command %q, want %q", c.cmd, c.work, c.out, tg.Start.Command, c.want)
		}
	}
}

func TestInit_CommandUnterminatedQuote(t *testing.T) {
	_, err := openapi.Init(openapi.Options{Command: `./srv "--x`})
	if !errors.Is(err, openapi.ErrCommand) || !strings.Contains(err.Error(), `unterminated "`) {
		t.Errorf("got %v", err)
	}
}

// The Stripe-shaped document: JSON body, the order under metadata in
// the request and the answer (the garden's stripe-body).
func TestInit_StripeShapedCharges(t *testing.T) {
	tg, res := initTarget(t, openapi.Options{Spec: "testdata/charges.yaml", Command: "../bin/reference-server --variant=stripe-body"})
	p := tg.Protocol
	if tg.Name != "charges-api" || p.Path != "/v1/charges" || p.Encoding != target.EncodingJSON || p.KeyHeader != "Idempotency-Key" {
		t.Errorf("name %q path %q encoding %q key %q", tg.Name, p.Path, p.Encoding, p.KeyHeader)
	}
	want := target.Fields{ID: "id", Status: "status", Amount: "amount", Currency: "currency", OrderID: "/metadata/order_id"}
	if p.Fields != want {
		t.Errorf("fields %+v, want %+v", p.Fields, want)
	}
	r := request(t, tg)
	if got := string(r.Body); got != `{"amount":1250,"currency":"usd","source":"tok_visa","metadata":{"order_id":"ord 7"}}` {
		t.Errorf("body %s: want the required fields, source from its example, and the order under metadata (not application_fee_amount, not description)", got)
	}
	if len(res.Notes) != 0 {
		t.Errorf("notes %q: the document declares every field", res.Notes)
	}
}

// The shop's document: the order in the path, a form body with required
// static fields (the garden's own-shape).
func TestInit_OwnShapeOrders(t *testing.T) {
	tg, _ := initTarget(t, openapi.Options{Spec: "testdata/orders.yaml"})
	p := tg.Protocol
	if tg.Name != "shop-payments" || p.Path != "/orders/{order_id}/payments" || p.Encoding != target.EncodingForm {
		t.Errorf("name %q path %q encoding %q", tg.Name, p.Path, p.Encoding)
	}
	r := request(t, tg)
	if r.Path != "/orders/ord%207/payments" || r.ContentType != "application/x-www-form-urlencoded" {
		t.Errorf("request to %s as %s", r.Path, r.ContentType)
	}
	if got := string(r.Body); got != "amount=1250&currency=usd&customer=cus_123&payment_method=pm_card_visa" {
		t.Errorf("body %s", got)
	}
	if p.Fields.OrderID != "order_id" || p.Fields.Currency != "currency" {
		t.Errorf("fields %+v", p.Fields)
	}
}

// An Adyen-shaped request: the amount an object of value and currency,
// the order a merchant reference, the key header X-prefixed.
const adyenSpec = `openapi: 3.0.3
info: {title: Checkout, version: "71"}
paths:
  /payments:
    post:
      operationId: post-payments
      parameters:
        - {name: x-idempotency-key, in: header, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [amount, merchantAccount, paymentMethod, reference]
              properties:
                merchantAccount: {type: string, example: ShopECOM}
                amount:
                  type: object
                  required: [value, currency]
                  properties:
                    currency: {type: string, maxLength: 3, minLength: 3}
                    value: {type: integer, format: int64}
                reference: {type: string}
                paymentMethod:
                  type: object
                  required: [type]
                  properties:
                    type: {type: string, enum: [scheme, ideal]}
                shopperEmail: {type: string, format: email}
                captureDelayHours: {type: integer}
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/PaymentResponse"}}}}
components:
  schemas:
    PaymentResponse:
      type: object
      properties:
        pspReference: {type: string}
        resultCode: {type: string}
        amount: {$ref: "#/components/schemas/Amount"}
        merchantReference: {type: string}
    Amount:
      type: object
      properties:
        currency: {type: string}
        value: {type: integer, format: int64}
`

func TestInit_APIKeyHeaderAuth(t *testing.T) {
	spec := strings.Replace(adyenSpec, "components:\n", "components:\n  securitySchemes:\n    ApiKeyAuth: {type: apiKey, in: header, name: X-API-Key}\n", 1)
	spec = strings.Replace(spec, "paths:\n", "security: [{ApiKeyAuth: []}]\npaths:\n", 1)
	tg, _ := initTarget(t, openapi.Options{Spec: writeSpec(t, "key.yaml", spec)})
	if tg.Protocol.AuthHeader != "X-API-Key" || tg.Protocol.AuthScheme != "none" {
		t.Errorf("auth header %q scheme %q", tg.Protocol.AuthHeader, tg.Protocol.AuthScheme)
	}
	tg, _ = initTarget(t, openapi.Options{Spec: "testdata/charges.yaml"}) // bearer: the defaults
	if tg.Protocol.AuthHeader != "Authorization" || tg.Protocol.AuthScheme != "Bearer" {
		t.Errorf("auth header %q scheme %q", tg.Protocol.AuthHeader, tg.Protocol.AuthScheme)
	}
}

// A JSON document reads as a YAML one does.
func TestInit_JSONDocument(t *testing.T) {
	spec := `{"openapi": "3.0.3", "info": {"title": "Pay", "version": "1"},
 "paths": {"/pay": {"post": {"parameters": [{"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"}}],
  "requestBody": {"content": {"application/json": {"schema": {"type": "object", "required": ["amount", "currency", "order_id"],
   "properties": {"amount": {"type": "integer"}, "currency": {"type": "string", "enum": ["usd", "eur"]}, "order_id": {"type": "string"}}}}}},
  "responses": {"201": {"description": "ok"}}}}}}`
	tg, _ := initTarget(t, openapi.Options{Spec: writeSpec(t, "pay.json", spec)})
	if got := string(request(t, tg).Body); tg.Name != "pay" || got != `{"amount":1250,"currency":"usd","order_id":"ord 7"}` {
		t.Errorf("name %q body %s", tg.Name, got)
	}
}

func TestInit_NestedAmountAndXHeader(t *testing.T) {
	tg, res := initTarget(t, openapi.Options{Spec: writeSpec(t, "adyen.yaml", adyenSpec)})
	p := tg.Protocol
	if p.KeyHeader != "x-idempotency-key" || p.Path != "/payments" {
		t.Errorf("key header %q path %q", p.KeyHeader, p.Path)
	}
	r := request(t, tg)
	if got := string(r.Body); got != `{"merchantAccount":"ShopECOM","amount":{"currency":"usd","value":1250},"reference":"ord 7","paymentMethod":{"type":"scheme"}}` {
		t.Errorf("body %s", got)
	}
	if p.Fields.Amount != "/amount/value" || p.Fields.Currency != "/amount/currency" || p.Fields.OrderID != "merchantReference" {
		t.Errorf("fields %+v", p.Fields)
	}
	// The answer has neither id nor status by those names: defaults, noted.
	if p.Fields.ID != "id" || len(res.Notes) != 2 || !strings.Contains(res.Notes[0], "declares no id") {
		t.Errorf("id field %q, notes %q", p.Fields.ID, res.Notes)
	}
	if !strings.Contains(string(res.YAML), "    id: id  # the answer's schema declares none") {
		t.Errorf("the defaulted id is not marked in the file:\n%s", res.YAML)
	}
}

// ambiguousSpec has two amounts in the request and two orders in the
// answer.
const ambiguousSpec = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /p:
    post:
      parameters:
        - {name: Idempotency-Key, in: header, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Req"}
      responses:
        "201":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  id: {type: string}
                  order_id: {type: string}
                  metadata:
                    type: object
                    properties:
                      order_id: {type: string}
components:
  schemas:
    Req:
      type: object
      required: [amount, currency]
      properties:
        amount: {type: integer}
        amount_minor: {type: integer}
        currency: {type: string}
        metadata:
          type: object
          properties:
            order_id: {type: string}
`

func TestInit_AmbiguousNamesCandidatesAndFlag(t *testing.T) {
	spec := writeSpec(t, "amb.yaml", ambiguousSpec)
	_, err := openapi.Init(openapi.Options{Spec: spec})
	for _, want := range []string{spec + ":28: #/components/schemas/Req: 2 properties of the request body could be the amount",
		"amount (line 32), amount_minor (line 33)", "--amount amount"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v\nwant %q", err, want)
		}
	}
	// The flag settles the request; the answer's two orders are next.
	_, err = openapi.Init(openapi.Options{Spec: spec, Amount: "amount_minor"})
	if err == nil || !strings.Contains(err.Error(), "success answer could be the order id: order_id (line 21), metadata.order_id (line 25); name the one to use with --order-id order_id") {
		t.Errorf("got %v", err)
	}
	tg, res := initTarget(t, openapi.Options{Spec: spec, Amount: "amount_minor", OrderID: "/metadata/order_id"})
	if got := string(request(t, tg).Body); got != `{"amount":1,"amount_minor":1250,"currency":"usd","metadata":{"order_id":"ord 7"}}` {
		t.Errorf("body %s: want amount_minor as the amount, amount (required, no example) a guessed 1", got)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool {
		return strings.HasPrefix(n, "protocol.body.amount: the document gives no example")
	}) {
		t.Errorf("notes %q: want the guessed amount noted", res.Notes)
	}
	if tg.Protocol.Fields.OrderID != "/metadata/order_id" {
		t.Errorf("order field %q", tg.Protocol.Fields.OrderID)
	}
}

func TestInit_FlagNamingNothingIsRefused(t *testing.T) {
	_, err := openapi.Init(openapi.Options{Spec: "testdata/charges.yaml", Currency: "money.code"})
	if err == nil || !strings.Contains(err.Error(), "--currency money.code: no such property in the request body, nor in the success answer") {
		t.Errorf("got %v", err)
	}
}

func TestInit_SpecErrors(t *testing.T) {
	noKey := writeSpec(t, "nokey.yaml", strings.Replace(ambiguousSpec, "Idempotency-Key", "X-Request-Id", 1))
	swagger := writeSpec(t, "swagger.json", `{"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}}`)
	notSpec := writeSpec(t, "notes.yaml", "shopping:\n  - milk\n")
	noBody := writeSpec(t, "nobody.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /p:\n    post:\n      operationId: pay\n      parameters:\n        - {name: Idempotency-Key, in: header, schema: {type: string}}\n      responses:\n        '200': {description: ok}\n")
	xml := writeSpec(t, "xml.yaml", strings.Replace(ambiguousSpec, "      requestBody:\n        content:\n          application/json:", "      requestBody:\n        content:\n          application/xml:", 1))
	last := strings.LastIndex(ambiguousSpec, "order_id:") // the request's metadata.order_id
	noOrder := writeSpec(t, "noorder.yaml", ambiguousSpec[:last]+"note:"+ambiguousSpec[last+len("order_id:"):])
	pathParam := writeSpec(t, "param.yaml", strings.Replace(ambiguousSpec, "  /p:\n", "  /m/{merchant}/p:\n", 1))
	cases := []struct {
		name string
		opts openapi.Options
		want []string
	}{
		{"no such file", openapi.Options{Spec: "testdata/none.yaml"}, []string{"testdata/none.yaml: cannot read the OpenAPI document: no such file or directory"}},
		{"swagger 2", openapi.Options{Spec: swagger}, []string{swagger + ":1: #/swagger: a Swagger 2.0 document, not OpenAPI 3"}},
		{"not a document", openapi.Options{Spec: notSpec}, []string{notSpec + ":1: #/openapi: not an OpenAPI 3 document: expected openapi: 3.x at the top"}},
		{"no key header", openapi.Options{Spec: noKey}, []string{noKey + ":3: #/paths: no operation declares an idempotency key header", "--operation, one of POST /p"}},
		{"unknown operation", openapi.Options{Spec: "testdata/charges.yaml", Operation: "CreateCharge"}, []string{"testdata/charges.yaml:14: #/paths: --operation CreateCharge: no operation has that operationId", "POST /v1/charges (PostCharges), GET /v1/charges (GetCharges), GET /v1/charges/{charge} (GetChargesCharge)"}},
		{"no request body", openapi.Options{Spec: noBody}, []string{noBody + ":5: #/paths/~1p/post: POST /p (pay) has no requestBody"}},
		{"xml body", openapi.Options{Spec: xml, Amount: "amount"}, []string{"#/paths/~1p/post/requestBody/content: the request body is application/xml"}},
		{"no order", openapi.Options{Spec: noOrder, Amount: "amount"}, []string{"#/components/schemas/Req: no property of the request body holds the order id", "--order-id PATH"}},
		{"path parameter", openapi.Options{Spec: pathParam, Amount: "amount"}, []string{"#/paths/~1m~1{merchant}~1p/post: path parameter {merchant} is none of the payment's values"}},
	}
	for _, c := range cases {
		_, err := openapi.Init(c.opts)
		if !errors.Is(err, openapi.ErrSpec) {
			t.Errorf("%s: %v does not wrap ErrSpec", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: got %v\nwant %q", c.name, err, w)
			}
		}
	}
}

func TestInit_OperationChosenByID(t *testing.T) {
	// GetChargesCharge has no key header and no body: taken, then refused for its body.
	_, err := openapi.Init(openapi.Options{Spec: "testdata/charges.yaml", Operation: "GetChargesCharge"})
	if err == nil || !strings.Contains(err.Error(), "GET /v1/charges/{charge} (GetChargesCharge) has no requestBody") {
		t.Errorf("got %v", err)
	}
	tg, _ := initTarget(t, openapi.Options{Spec: "testdata/orders.yaml", Operation: "payOrder"})
	if tg.Protocol.Path != "/orders/{order_id}/payments" {
		t.Errorf("path %q", tg.Protocol.Path)
	}
}

func TestInit_GuessedValuesAreNoted(t *testing.T) {
	spec := writeSpec(t, "guess.yaml", strings.Replace(ambiguousSpec, "required: [amount, currency]", "required: [amount, currency, customer, tags]\n      properties:\n        customer: {type: string, format: uuid}\n        tags: {type: array, items: {type: string, enum: [a, b]}}", 1))
	spec = writeSpec(t, "guess.yaml", strings.Replace(readFile(t, spec), "      properties:\n        amount:", "        amount:", 1))
	tg, res := initTarget(t, openapi.Options{Spec: spec, Amount: "amount", OrderID: "metadata.order_id"})
	if got := string(request(t, tg).Body); got != `{"customer":"00000000-0000-4000-8000-000000000000","tags":["a"],"amount":1250,"currency":"usd","metadata":{"order_id":"ord 7"}}` {
		t.Errorf("body %s", got)
	}
	var guessed []string
	for _, n := range res.Notes {
		if strings.HasPrefix(n, "protocol.body.") {
			guessed = append(guessed, n)
		}
	}
	if len(guessed) != 1 || !strings.HasPrefix(guessed[0], "protocol.body.customer: the document gives no example") {
		t.Errorf("notes %q: want the made-up customer (and only it: tags has an enum) noted", res.Notes)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A required property whose schema lists itself ends: the file loads.
func TestInit_RecursiveSchemaEnds(t *testing.T) {
	spec := strings.Replace(ambiguousSpec, "required: [amount, currency]", "required: [amount, currency, tree, node]", 1) +
		"        tree: {$ref: \"#/components/schemas/Tree\"}\n        node: {$ref: \"#/components/schemas/Node\"}\n" +
		"    Tree: {type: array, items: {$ref: \"#/components/schemas/Tree\"}}\n" +
		"    Node: {type: object, required: [next], properties: {next: {$ref: \"#/components/schemas/Node\"}}}\n"
	tg, _ := initTarget(t, openapi.Options{Spec: writeSpec(t, "tree.yaml", spec), Amount: "amount", OrderID: "metadata.order_id"})
	if got := string(request(t, tg).Body); !strings.Contains(got, `"tree":[[[[[[null]]]]]]`) || !strings.Contains(got, `"node":{"next":{"next":{"next":{"next":{"next":{}}}}}}`) {
		t.Errorf("body %s", got)
	}
}
