package runner

import (
	"regexp"
	"testing"

	"github.com/idemcheck/idemcheck/target"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestRealKey_UUIDFormat: with protocol.key_format uuid every key is a
// 36-character UUID (version 8), the same symbolic key of one example is
// the same UUID, and two symbols or two examples give two UUIDs; without
// it the key is the plain nonce-symbol string.
func TestRealKey_UUIDFormat(t *testing.T) {
	tg := &target.Target{}
	tg.Protocol.KeyFormat = target.KeyUUID
	a := &execution{r: New(Config{Target: tg}), nonce: "n1"}
	b := &execution{r: New(Config{Target: tg}), nonce: "n2"}
	k0 := a.realKey("k0")
	if !uuidRE.MatchString(k0) || len(k0) != 36 {
		t.Fatalf("key %q is no version-8 UUID", k0)
	}
	if a.realKey("k0") != k0 || a.realKey("k1") == k0 || b.realKey("k0") == k0 {
		t.Fatalf("keys not one per symbol and example: %s %s %s", k0, a.realKey("k1"), b.realKey("k0"))
	}
	plain := &execution{r: New(Config{Target: &target.Target{}}), nonce: "n1"}
	if got := plain.realKey("k0"); got != "n1-k0" {
		t.Fatalf("plain key %q, want n1-k0", got)
	}
}
