package target_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/internal/fuzzcheck"
	"github.com/idemcheck/idemcheck/target"
)

// FuzzParse feeds arbitrary bytes to the target-file loader. A parse
// returns a target or an error naming the file and a line or field,
// within fuzzcheck.Timeout, never a panic. A target it accepts is one
// the harness can use: parsing again gives the same target (defaults are
// a fixed point), every writing of a payment's request is the same
// request spelled differently, the order id reaches the server, and
// every static-field edit that key-reuse sends is a different request.
// Seeds: the documented examples/*.yaml and a few broken files; the
// corpus is kept in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../examples/*.yaml")
	if len(files) == 0 {
		f.Fatal("no examples/*.yaml to seed the corpus")
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nreplika: 2\n",
		"name: x\nstart: {command: ./s}\npolicy:\n  ttl: forever\n",
		"name: x\nstart: [\n",
		"name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nprotocol:\n  body: {amount: \"{{.Amount}}\", currency: \"{{.Currency}}\", metadata: {order_id: \"{{.OrderID}}\", n: 2.5, m: [1, true, null]}}\n",
		"name: x\nstart: {command: ./s}\npolicy: {ttl: 1h}\nprotocol:\n  encoding: form\n  path: /o/{order_id}/{currency}\n  body: {amount: \"{{.Amount}}\", items: [{price: 3}, x]}\n",
	} {
		f.Add([]byte(s))
	}
	const name = "fuzz.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzcheck.MaxInput {
			t.Skip("larger than any target file")
		}
		defer fuzzcheck.Watchdog(data)()
		tg, err := fuzzcheck.Parse(t, name, data, target.Parse)
		if err != nil {
			fuzzcheck.NamesPlace(t, err, name, data, target.ErrInvalid)
			return
		}
		again, err := target.Parse(name, data)
		if err != nil || again.Validate() != nil || !reflect.DeepEqual(tg, again) {
			t.Fatalf("parse is not a fixed point: %v\n%+v\n%+v", err, tg, again)
		}
		checkRequests(t, tg.Protocol)
	})
}

// fuzzPayment's order id is one no template can contain by chance.
var fuzzPayment = target.Payment{Amount: 1250, Currency: "usd", OrderID: "ord_fz7q", Description: "fuzz"}

// checkRequests asserts what the client relies on in a protocol it was
// handed: each writing decodes as the plain request does, the order id
// is in the path or the body, and each static field's edit decodes
// differently.
func checkRequests(t *testing.T, p target.Protocol) {
	plain := request(t, p, target.Writing{})
	if !strings.HasPrefix(plain.Path, "/") {
		t.Fatalf("request path %q is not absolute", plain.Path)
	}
	body := decode(t, p.Encoding, plain.Body)
	path, _ := url.PathUnescape(plain.Path)
	if !strings.Contains(path, fuzzPayment.OrderID) && !strings.Contains(string(mustJSON(t, body)), fuzzPayment.OrderID) {
		t.Fatalf("the order id reaches neither the path %s nor the body %s", plain.Path, plain.Body)
	}
	for _, style := range p.Writings() {
		w := request(t, p, target.Writing{Style: style})
		if got := decode(t, p.Encoding, w.Body); !reflect.DeepEqual(got, body) || w.Path != plain.Path {
			t.Fatalf("writing %s is another request:\n%s %s\n%s %s", style, plain.Path, plain.Body, w.Path, w.Body)
		}
	}
	for _, sf := range p.Template().StaticFields() {
		e := request(t, p, target.Writing{Edit: sf.Pointer})
		if reflect.DeepEqual(decode(t, p.Encoding, e.Body), body) {
			t.Fatalf("edit %s leaves the request equal:\n%s\n%s", sf.Pointer, plain.Body, e.Body)
		}
	}
}

func request(t *testing.T, p target.Protocol, w target.Writing) target.Request {
	t.Helper()
	r, err := p.Request(fuzzPayment, w)
	if err != nil {
		t.Fatalf("a loaded target cannot write request %+v: %v", w, err)
	}
	if r.ContentType != target.ContentType(p.Encoding) {
		t.Fatalf("content type %q for encoding %q", r.ContentType, p.Encoding)
	}
	return r
}

// decode reads a body as the server does: a JSON document with numbers
// as doubles (as RFC 8785 compares them), or form parameters in any
// order.
func decode(t *testing.T, encoding string, body []byte) any {
	t.Helper()
	if encoding == target.EncodingForm {
		q, err := url.ParseQuery(string(body))
		if err != nil {
			t.Fatalf("form body does not parse: %v\n%s", err, body)
		}
		for _, vs := range q {
			slices.Sort(vs)
		}
		return q
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&v); err != nil || dec.More() {
		t.Fatalf("JSON body does not parse: %v\n%s", err, body)
	}
	return v
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
