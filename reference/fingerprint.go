package reference

import (
	"crypto/sha256"

	"github.com/gowebpki/jcs"
)

// Canonicalize returns the RFC 8785 (JCS) canonical form of a JSON document:
// members sorted by UTF-16 code units, numbers in their shortest ES6 form
// (`1e2` and `100.0` become `100`), strings with minimal escaping, no
// insignificant whitespace. Duplicate member names are rejected, so two
// parsers can never disagree about what a body says.
func Canonicalize(body []byte) ([]byte, error) {
	if body == nil {
		body = []byte{}
	}
	return jcs.Transform(body)
}

// Fingerprint identifies a request for idempotency purposes: SHA-256 over
// the method, the path and the canonical body, each length-prefixed so no
// two different triples can collide by concatenation. Two requests are "the
// same request" exactly when their fingerprints are equal; whitespace, key
// order and number spelling do not count, string case does (`USD` ≠ `usd`).
func Fingerprint(method, path string, canonical []byte) []byte {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(method), []byte(path), canonical} {
		var n [8]byte
		l := uint64(len(part))
		for i := range n {
			n[i] = byte(l >> (56 - 8*i))
		}
		h.Write(n[:])
		h.Write(part)
	}
	return h.Sum(nil)
}
