package checker

import (
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/history"
)

func TestKey_ServerKey(t *testing.T) {
	cases := []struct {
		name string
		op   history.Op
		key  string
		ok   bool
	}{
		{"bare", history.Op{Key: "k1", KeyHeader: "k1"}, "k1", true},
		{"quoted is the same key", history.Op{Key: "k1", KeyHeader: `"k1"`}, "k1", true},
		{"quoted with escapes", history.Op{KeyHeader: `"a\"b\\c"`}, `a"b\c`, true},
		{"header not recorded", history.Op{Key: "k1"}, "k1", true},
		{"no header", history.Op{Key: "k1", NoKey: true}, "", false},
		{"empty header", history.Op{}, "", false},
		{"empty quoted", history.Op{KeyHeader: `""`}, "", false},
		{"unterminated quote", history.Op{KeyHeader: `"k1`}, "", false},
		{"text after quote", history.Op{KeyHeader: `"k1"x`}, "", false},
		{"bad escape", history.Op{KeyHeader: `"k\1"`}, "", false},
		{"space inside quotes", history.Op{KeyHeader: `"a b"`}, "a b", false},
		{"space bare", history.Op{KeyHeader: "a b"}, "a b", false},
		{"255 chars", history.Op{KeyHeader: strings.Repeat("k", 255)}, strings.Repeat("k", 255), true},
		{"256 chars", history.Op{KeyHeader: strings.Repeat("k", 256)}, strings.Repeat("k", 256), false},
		{"non-ASCII", history.Op{KeyHeader: "clé"}, "clé", false},
	}
	for _, c := range cases {
		key, ok := serverKey(&c.op)
		if ok != c.ok || (ok && key != c.key) {
			t.Errorf("%s: serverKey = %q, %v; want %q, %v", c.name, key, ok, c.key, c.ok)
		}
	}
}

func TestBody_CanonicalEquality(t *testing.T) {
	c := canonicalizer{}
	base := c.of(&history.Op{Body: `{"amount":100,"currency":"usd","order_id":"o"}`})
	same := []string{
		`{ "order_id": "o", "currency": "usd", "amount": 100 }`,
		`{"amount":1e2,"currency":"usd","order_id":"o"}`,
		`{"amount":100.0,"currency":"usd","order_id":"o"}`,
	}
	for _, b := range same {
		if got := c.of(&history.Op{Body: b}); got != base {
			t.Errorf("%s: canonical %s, want %s", b, got, base)
		}
	}
	differ := []string{
		`{"amount":100,"currency":"USD","order_id":"o"}`,
		`{"amount":101,"currency":"usd","order_id":"o"}`,
		`not json`,
	}
	for _, b := range differ {
		if got := c.of(&history.Op{Body: b}); got == base {
			t.Errorf("%s: canonically equal to the base body", b)
		}
	}
	synth := c.of(&history.Op{Order: "o", Amount: 100, Currency: "usd"})
	if synth != base {
		t.Errorf("an empty body is rebuilt from the op's fields: %s, want %s", synth, base)
	}
}
