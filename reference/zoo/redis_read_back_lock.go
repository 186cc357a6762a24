package zoo

// redisReadBackLock takes a key on a store without compare-and-set by
// writing and reading back: GET the key; when it is absent, write an
// in-progress record without NX, GET it again, and go ahead only when the
// record read back carries this request's fingerprint (else 409). The
// read-back tells a different request's overwrite apart, but every
// duplicate of one payment has the same fingerprint: two duplicates whose
// first GETs both miss both read back "their" fingerprint, and both
// charge.
//
// Incident: paveg/hono-idempotency#91: the Cloudflare KV store's lock()
// was get, put, get, and compared the fingerprint read back with its own
// (src/stores/cloudflare-kv.ts:34-42, as the issue quotes it); two
// identical concurrent retries both acquired the key, and the handler ran
// twice (M1, found by concurrent-duplicates). The fix compares a
// per-writer nonce instead.
var redisReadBackLock = Variant{
	Name: "redis-read-back-lock",
	Bug:  "a lock without compare-and-set: GET, SET, GET and compare the fingerprint read back, which every duplicate shares",
	New:  overwritingOnRedis(overwriting{inFlight: true, readBack: true}),
}
