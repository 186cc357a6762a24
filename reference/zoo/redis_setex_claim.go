package zoo

// redisSetexClaim claims a key on Redis with a plain SETEX: GET the key;
// when it is absent, write an in-progress record without NX, charge
// under a fresh request id, then overwrite the record with the answer.
// A duplicate that arrives after the claim sees the key in flight and is
// refused with 409; duplicates whose GETs both come before the first
// claim both write it, the later one silently replacing the other, and
// both charge.
//
// Incident: idempot-dev/idempot-js#182 (and #181 for its SQL stores):
// the Redis stores' startProcessing issued SETEX with no NX, so a racing
// duplicate overwrote the in-flight record and both requests proceeded
// (packages/stores/redis/node-redis.js, startProcessing; complete then
// GETs and SETEXes the record again). The customer is charged twice (M1,
// found by concurrent-duplicates).
var redisSetexClaim = Variant{
	Name: "redis-setex-claim",
	Bug:  "claims the key with SETEX (no NX) after a GET: duplicates whose GETs both miss overwrite each other's in-flight record and both charge",
	New:  overwritingOnRedis(overwriting{inFlight: true}),
}
