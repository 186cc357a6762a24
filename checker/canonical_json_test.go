package checker

import (
	"testing"

	"github.com/gowebpki/jcs"
)

// canonSamples are bodies the fast path must take (true) or leave to jcs
// (false).
var canonSamples = map[string]bool{
	`{"amount":1250,"currency":"usd","order_id":"ord_1"}`: true,
	`{"a":[1,-2,0,true,false,null,{},[]],"b":{"c":"d"}}`:  true,
	`{}`:              true,
	`[]`:              true,
	`"x"`:             true,
	`999999999999999`: true,
	`{"order_id":"ord_1","currency":"usd","amount":1250}`: false, // keys out of order
	`{ "amount": 1250 }`:          false, // whitespace
	`{"amount":1.25e3}`:           false,
	`{"amount":1250.0}`:           false,
	`{"amount":-0}`:               false,
	`{"amount":01}`:               false,
	`{"amount":1234567890123456}`: false, // 16 digits
	`{"a":1,"a":2}`:               false, // duplicate key
	`{"a":"\u0041"}`:              false, // an escape
	`{"a":"é"}`:                   false, // not ASCII
	`{"a":1,}`:                    false,
	`{"a":1}x`:                    false,
	`{"a":1`:                      false,
	`[1,]`:                        false,
	`tru`:                         false,
	``:                            false,
}

// TestAlreadyCanonical: what the fast path takes, jcs leaves unchanged,
// and it takes the bodies a run sends.
func TestAlreadyCanonical(t *testing.T) {
	for body, want := range canonSamples {
		got := alreadyCanonical(body)
		if got != want {
			t.Errorf("alreadyCanonical(%s) = %v, want %v", body, got, want)
		}
		if got {
			if out, err := jcs.Transform([]byte(body)); err != nil || string(out) != body {
				t.Errorf("fast path took %s, but RFC 8785 makes it %s (%v)", body, out, err)
			}
		}
	}
}

// FuzzAlreadyCanonical: whatever the fast path takes, jcs leaves as it is.
func FuzzAlreadyCanonical(f *testing.F) {
	for body := range canonSamples {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !alreadyCanonical(body) {
			return
		}
		if out, err := jcs.Transform([]byte(body)); err != nil || string(out) != body {
			t.Fatalf("fast path took %q, but RFC 8785 makes it %q (%v)", body, out, err)
		}
	})
}
