package reference

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// MaxKeyLen is the longest idempotency key accepted, in bytes (docs/protocol.md §1).
const MaxKeyLen = 255

// maxTokenLen bounds the bearer token; longer is treated as malformed.
const maxTokenLen = 1024

// ParseIdempotencyKey returns the key carried by the Idempotency-Key header
// values. The IETF draft defines the header as a structured-field string, so
// the quoted form `"abc"` is accepted and unquoted (only \" and \\ escapes
// are legal inside); the bare form `abc` is what most clients send. Either
// way the key must be 1..MaxKeyLen visible ASCII characters, and the header
// must appear exactly once: two values would make the key ambiguous.
func ParseIdempotencyKey(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", badKey("header is required")
	case 1:
	default:
		return "", badKey("header must appear once")
	}
	v := strings.TrimSpace(values[0])
	if strings.HasPrefix(v, `"`) {
		u, err := unquoteSFString(v)
		if err != nil {
			return "", err
		}
		v = u
	}
	if v == "" {
		return "", badKey("must not be empty")
	}
	if len(v) > MaxKeyLen {
		return "", badKey("longer than 255 characters")
	}
	if !visibleASCII(v) {
		return "", badKey("must be visible ASCII (0x21-0x7E)")
	}
	return v, nil
}

// unquoteSFString decodes an RFC 8941 sf-string: DQUOTE *chr DQUOTE, where
// chr is printable ASCII other than `"` and `\`, or one of the escapes \" \\.
func unquoteSFString(v string) (string, error) {
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			i++
			if i >= len(v) || (v[i] != '"' && v[i] != '\\') {
				return "", badKey(`malformed quoted string: only \" and \\ may be escaped`)
			}
			b.WriteByte(v[i])
		case c == '"':
			if i != len(v)-1 {
				return "", badKey("malformed quoted string: characters after the closing quote")
			}
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", badKey("malformed quoted string: non-printable character")
		default:
			b.WriteByte(c)
		}
	}
	return "", badKey("malformed quoted string: no closing quote")
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// ParseBearer returns the token of an `Authorization: Bearer <token>` header.
// The scheme is case-insensitive (RFC 9110 §11.1); the token must be visible
// ASCII. The token is the tenant's credential, so it is never logged or
// stored: TenantID derives the stored identity from it.
func ParseBearer(h http.Header) (string, error) {
	unauthorized := func(detail string) error {
		return &RequestError{Status: http.StatusUnauthorized, Field: "Authorization", Detail: detail, Kind: ErrUnauthorized}
	}
	vals := h.Values("Authorization")
	if len(vals) == 0 {
		return "", unauthorized("a bearer token is required")
	}
	if len(vals) > 1 {
		return "", unauthorized("header must appear once")
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", unauthorized("scheme must be Bearer")
	}
	token = strings.TrimLeft(token, " ")
	if token == "" || len(token) > maxTokenLen || !visibleASCII(token) {
		return "", unauthorized("malformed bearer token")
	}
	return token, nil
}

// TenantID is the stored identity of the tenant holding a bearer token: a
// truncated SHA-256 (128 bits, hex), so the database never holds a
// credential while keys stay scoped per tenant.
func TenantID(token string) string {
	sum := sha256.Sum256([]byte("idemcheck-tenant\x00" + token))
	return hex.EncodeToString(sum[:16])
}

// KeyHash is the stored form of an idempotency key: SHA-256 of the key. The
// row's primary key is (tenant, key hash), a fixed 32 bytes whatever the key
// length, and it is what a tombstone keeps after the key text is dropped.
func KeyHash(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}
