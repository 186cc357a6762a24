package reference_test

import (
	"bytes"
	"fmt"

	"github.com/idemcheck/idemcheck/reference"
)

// Semantically equal bodies are the same request; string case is not
// normalised.
func ExampleFingerprint() {
	fp := func(body string) []byte {
		canonical, err := reference.Canonicalize([]byte(body))
		if err != nil {
			panic(err)
		}
		return reference.Fingerprint("POST", "/v1/charges", canonical)
	}
	a := fp(`{"a":1,"b":100}`)
	b := fp(`{ "b": 1e2, "a": 1 }`)
	c := fp(`{"a":1,"b":"100"}`)
	fmt.Println(bytes.Equal(a, b), bytes.Equal(a, c))
	canonical, _ := reference.Canonicalize([]byte(`{ "b": 1e2, "a": 1 }`))
	fmt.Println(string(canonical))
	// Output:
	// true false
	// {"a":1,"b":100}
}

// The draft's quoted sf-string form is the same key as the bare form.
func ExampleParseIdempotencyKey() {
	for _, v := range []string{`ord_7f3a-1`, `"ord_7f3a-1"`, `"unterminated`} {
		key, err := reference.ParseIdempotencyKey([]string{v})
		fmt.Printf("%q %v\n", key, err)
	}
	// Output:
	// "ord_7f3a-1" <nil>
	// "ord_7f3a-1" <nil>
	// "" Idempotency-Key: malformed quoted string: no closing quote
}
