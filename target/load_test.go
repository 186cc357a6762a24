package target_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/target"
)

func TestLoad_ExampleReference(t *testing.T) {
	tg, err := target.Load("../examples/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if tg.Name != "reference" || tg.Replicas != 2 || tg.Policy.TTL != 2*time.Second || tg.Policy.MaxWait != time.Second {
		t.Fatalf("unexpected target: %+v", tg)
	}
	r, err := tg.Render(target.Vars{ListenAddr: "127.0.0.1:9000", DatabaseURL: "postgres://db", GatewayURL: "http://gw", GatewayAPIKey: "sk_test", TTL: time.Hour, MaxWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"DATABASE_URL=postgres://db", "GATEWAY_API_KEY=sk_test", "GATEWAY_URL=http://gw", "IDEMPOTENCY_TTL=1h0m0s", "LISTEN_ADDR=127.0.0.1:9000"}
	if strings.Join(r.Env, " ") != strings.Join(want, " ") {
		t.Fatalf("env = %v, want %v", r.Env, want)
	}
}

func TestLoad_Defaults(t *testing.T) {
	tg, err := target.Parse("min.yaml", []byte("name: x\nstart: {command: ./srv}\npolicy: {ttl: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Replicas != 2 || tg.Protocol.KeyHeader != "Idempotency-Key" || tg.Policy.RetryWindow != time.Hour || len(tg.Tenants) != 2 || tg.Ready.Path != "/healthz" {
		t.Fatalf("defaults not applied: %+v", tg)
	}
	if tg.Policy.Production != (target.Production{}) {
		t.Errorf("no production numbers declared, got %+v", tg.Policy.Production)
	}
}

// Principals that share an organisation are indices of tenants, grouped
// by organisation in the order of the organisations' names.
func TestLoad_Organisations(t *testing.T) {
	tg, err := target.Parse("o.yaml", []byte("name: x\nstart: {command: ./srv}\npolicy: {ttl: 1h}\n"+
		"tenants: [solo, globex.b, acme.a, globex.a, acme.b]\norganisations:\n  globex: [globex.a, globex.b]\n  acme: [acme.a, acme.b]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(tg.SharedPrincipals()), "[[2 4] [3 1]]"; got != want {
		t.Fatalf("shared principals = %s, want %s", got, want)
	}
}

// A declared production TTL gets Stripe's key lifetime unless the file
// names the provider's.
func TestLoad_ProductionDefaults(t *testing.T) {
	tg, err := target.Parse("p.yaml", []byte("name: x\nstart: {command: ./srv}\npolicy:\n  ttl: 1s\n  production: {ttl: 720h, retry_window: 1440h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := target.Production{TTL: 720 * time.Hour, RetryWindow: 1440 * time.Hour, ProviderKeyLifetime: 24 * time.Hour}
	if tg.Policy.Production != want {
		t.Fatalf("production = %+v, want %+v", tg.Policy.Production, want)
	}
}

// Every bad file names file:line, the field, and what was expected.
func TestLoad_BadFiles(t *testing.T) {
	const shape = "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nprotocol:\n"
	const orgs = "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\ntenants: [a.one, a.two, b.one]\norganisations:\n"
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown field", "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nreplika: 2\n", "bad.yaml:4:"},
		{"wrong type", "name: x\nstart: {command: ./s}\nreplicas: many\npolicy: {ttl: 1h}\n", "bad.yaml:3:"},
		{"bad duration", "name: x\nstart: {command: ./s}\npolicy:\n  ttl: forever\n", "bad.yaml:4:"},
		{"missing ttl", "name: x\nstart: {command: ./s}\npolicy:\n  max_wait: 1s\n", "bad.yaml:3: policy.ttl: expected the positive duration"},
		{"missing command", "name: x\npolicy: {ttl: 1h}\n", "bad.yaml: start.command: expected the command"},
		{"install without command", "name: x\nstart: {command: ./s}\ninstall: {args: [build]}\npolicy: {ttl: 1h}\n", "bad.yaml:3: install.command: expected the command that builds"},
		{"bad name", "name: X Y\nstart: {command: ./s}\npolicy: {ttl: 1h}\n", "bad.yaml:1: name: expected"},
		{"too many replicas", "name: x\nstart: {command: ./s}\nreplicas: 99\npolicy: {ttl: 1h}\n", "bad.yaml:3: replicas: expected 1 to 16"},
		{"unknown need", "name: x\nstart: {command: ./s}\nneeds: [redis, mongo]\npolicy: {ttl: 1h}\n", "bad.yaml:3: needs[1]: expected one of [postgres, redis, mysql], got \"mongo\""},
		{"need twice", "name: x\nstart: {command: ./s}\nneeds: [redis, redis]\npolicy: {ttl: 1h}\n", "bad.yaml:3: needs[1]: \"redis\" is listed twice"},
		{"bad template", "name: x\nstart:\n  command: ./s\n  env:\n    DB: \"{{.Databse}}\"\npolicy: {ttl: 1h}\n", "bad.yaml:5: start.env.DB: bad template"},
		{"one tenant", "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\ntenants: [a]\n", "bad.yaml:4: tenants: expected at least two"},
		{"duplicate tenant", "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\ntenants:\n  - a\n  - a\n", "bad.yaml:6: tenants[1]: tenant \"a\" is listed twice"},
		{"organisation of a stranger", orgs + "  acme:\n    - a.one\n    - a.three\n", "bad.yaml:8: organisations.acme[1]: expected one of the tokens under tenants, got \"a.three\""},
		{"organisation of one", orgs + "  acme: [a.one]\n", "bad.yaml:6: organisations.acme: expected two or more principals"},
		{"principal in two organisations", orgs + "  acme: [a.one, a.two]\n  globex:\n    - b.one\n    - a.two\n", "bad.yaml:9: organisations.globex[1]: principal \"a.two\" is already in organisation \"acme\""},
		{"principal twice", orgs + "  acme:\n    - a.one\n    - a.one\n", "bad.yaml:8: organisations.acme[1]: principal \"a.one\" is listed twice"},
		{"organisation name", orgs + "  Acme Corp: [a.one, a.two]\n", "bad.yaml:6: organisations.Acme Corp: expected an organisation name"},
		{"bad header", "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nprotocol:\n  key_header: \"Idem Key\"\n", "bad.yaml:5: protocol.key_header: expected an HTTP header name"},
		{"syntax", "name: x\nstart: [\n", "bad.yaml:"},
		{"bad pointer escape", "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nprotocol:\n  fields:\n    order_id: /metadata/o~2\n", "bad.yaml:6: protocol.fields.order_id: JSON pointer"},
		{"body without the order", shape + "  body:\n    amount: \"{{.Amount}}\"\n    currency: \"{{.Currency}}\"\n", "bad.yaml:5: protocol.body: the request never names the payment's order id: expected {{.OrderID}}"},
		{"body without the amount", shape + "  path: /orders/{order_id}\n  body:\n    currency: \"{{.Currency}}\"\n", "bad.yaml:6: protocol.body: the request never names the payment's amount"},
		{"body without the currency", shape + "  body: {amount: \"{{.Amount}}\", order_id: \"{{.OrderID}}\"}\n", "bad.yaml:5: protocol.body: the request never names the payment's currency"},
		{"unknown body placeholder", shape + "  body:\n    amount: \"{{.Amount}}\"\n    metadata:\n      order_id: \"{{.Foo}}\"\n", "bad.yaml:8: protocol.body.metadata.order_id: unknown placeholder {{.Foo}}: expected one of {{.Amount}}, {{.Currency}}, {{.OrderID}}, {{.Description}}"},
		{"template function in body", shape + "  body:\n    amount: \"{{printf 1}}\"\n", "bad.yaml:6: protocol.body.amount: unknown placeholder {{printf 1}}"},
		{"unknown path placeholder", shape + "  path: /orders/{order}/payments\n", "bad.yaml:5: protocol.path: unknown placeholder {order}: expected {order_id}, {amount} or {currency}"},
		{"unbalanced path brace", shape + "  path: /orders/{order_id/payments\n", "bad.yaml:5: protocol.path: unbalanced brace"},
		{"xml encoding", shape + "  encoding: xml\n", "bad.yaml:5: protocol.encoding: expected json or form, got \"xml\""},
		{"key format", shape + "  key_format: ulid\n", "bad.yaml:5: protocol.key_format: expected uuid (or nothing, for any string), got \"ulid\""},
		{"body not a mapping", shape + "  body: [a, b]\n", "bad.yaml:5:"},
		{"NaN in body", shape + "  body:\n    amount: \"{{.Amount}}\"\n    metadata: {rate: .nan}\n", "bad.yaml:7: protocol.body.metadata.rate: expected a finite number, got NaN"},
		{"empty pointer segment", "name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nprotocol:\n  fields:\n    id: /data//id\n", "bad.yaml:6: protocol.fields.id: JSON pointer"},
		{"production days", "name: x\nstart: {command: ./s}\npolicy:\n  ttl: 1s\n  production:\n    ttl: 30d\n", "bad.yaml:6: policy.production.ttl: expected a duration"},
		{"negative production ttl", "name: x\nstart: {command: ./s}\npolicy:\n  ttl: 1s\n  production:\n    ttl: -1h\n", "bad.yaml:6: policy.production.ttl: expected the positive duration"},
		{"negative provider lifetime", "name: x\nstart: {command: ./s}\npolicy:\n  ttl: 1s\n  production:\n    ttl: 720h\n    provider_key_lifetime: -24h\n", "bad.yaml:7: policy.production.provider_key_lifetime: expected a positive duration"},
		{"provider lifetime alone", "name: x\nstart: {command: ./s}\npolicy:\n  ttl: 1s\n  production:\n    provider_key_lifetime: 24h\n", "bad.yaml:5: policy.production.ttl: expected the production TTL"},
		{"unknown production field", "name: x\nstart: {command: ./s}\npolicy:\n  ttl: 1s\n  production:\n    tll: 720h\n", "bad.yaml:6:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := target.Parse("bad.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatal("accepted a bad file")
			}
			if !errors.Is(err, target.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error = %q, want prefix %q", err, c.want)
			}
		})
	}
}

func TestLoad_MissingFile(t *testing.T) {
	_, err := target.Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !errors.Is(err, target.ErrInvalid) || !strings.Contains(err.Error(), "nope.yaml") {
		t.Fatalf("err = %v", err)
	}
	if _, statErr := os.Stat("nope.yaml"); statErr == nil {
		t.Fatal("created a file")
	}
}

// TestFieldPath_NameOrPointer: a bare name is the top-level field; a JSON
// pointer walks into nested objects, with ~1 and ~0 escapes.
func TestFieldPath_NameOrPointer(t *testing.T) {
	for in, want := range map[string][]string{
		"order_id": {"order_id"}, "/order_id": {"order_id"}, "/metadata/order_id": {"metadata", "order_id"},
		"/a~1b/c~0d": {"a/b", "c~d"},
	} {
		got, err := target.FieldPath(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("FieldPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "/", "/a/", "/a~"} {
		if _, err := target.FieldPath(in); err == nil {
			t.Errorf("FieldPath(%q) accepted", in)
		}
	}
}

func TestLoad_StripeShapedFields(t *testing.T) {
	tg, err := target.Parse("s.yaml", []byte("name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nprotocol:\n  fields:\n    order_id: /metadata/order_id\n"))
	if err != nil || tg.Protocol.Fields.OrderID != "/metadata/order_id" || tg.Protocol.Fields.ID != "id" {
		t.Fatalf("%v %+v", err, tg)
	}
}
