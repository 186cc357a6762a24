package redisstore

import "github.com/redis/go-redis/v9"

// Every write is one of these scripts: Redis runs a script atomically, so
// each check (the key absent, the request id and lease owner the caller
// holds, the lease expired) and the write it guards are one step, as a
// conditional statement is in PostgreSQL. A record is decoded and
// re-encoded with cjson; every number in it is a string (see doc), and
// every time and owner token comes from the caller, never from Redis's
// clock.
//
// KEYS[1] is the record, unless said otherwise; the lease index (unresolved
// keys by lease expiry) and the finished index (terminal keys by expiry)
// are sorted sets named in KEYS too. Scripts that rewrite a record keep its
// TTL (KEEPTTL): the TTL is set once, by the claim, to the key's forget
// time.

// prelude is shared by the scripts.
const prelude = `
local function unresolved(r) return r.state == 'in_progress' or r.state == 'needs_recovery' end
local function terminal(r) return r.state == 'succeeded' or r.state == 'failed' end
local function load(k)
	local v = redis.call('GET', k)
	if not v then return nil end
	return cjson.decode(v)
end
local function store(k, r)
	local v = cjson.encode(r)
	redis.call('SET', k, v, 'KEEPTTL')
	return v
end
`

// claimScript: KEYS record, lease index; ARGV value, TTL in ms, lease
// until. SET NX PX is the claim; the existing value is the answer when it
// fails.
var claimScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
	return {1}
end
return {0, redis.call('GET', KEYS[1])}
`)

// reclaimScript: KEYS record, lease index, finished index; ARGV value, TTL
// in ms, lease until, now. Only a terminal record past its forget time is
// replaced.
var reclaimScript = redis.NewScript(prelude + `
local r = load(KEYS[1])
if not r or not terminal(r) or tonumber(r.forget_at) > tonumber(ARGV[4]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
redis.call('ZREM', KEYS[3], KEYS[1])
return 1
`)

// registerScript: KEYS record. One more waiter on an unresolved key; the
// record as registered, or nil.
var registerScript = redis.NewScript(prelude + `
local r = load(KEYS[1])
if not r or not unresolved(r) then return false end
r.waiters = tostring(tonumber(r.waiters) + 1)
return store(KEYS[1], r)
`)

// finishScript: KEYS record, lease index, finished index; ARGV request id,
// state, status, body (base64), charge id, now, channel, payload. Only the
// holder of the record's request id finishes it; registered waiters are
// told in the same step.
var finishScript = redis.NewScript(prelude + `
local r = load(KEYS[1])
if not r or not unresolved(r) or r.request_id ~= ARGV[1] then return 0 end
r.state = ARGV[2]
r.status = ARGV[3]
r.body = ARGV[4]
r.charge_id = ARGV[5]
r.finished_at = ARGV[6]
r.owner = ''
store(KEYS[1], r)
redis.call('ZREM', KEYS[2], KEYS[1])
redis.call('ZADD', KEYS[3], r.expires_at, KEYS[1])
if tonumber(r.waiters) > 0 then redis.call('PUBLISH', ARGV[7], ARGV[8]) end
return 1
`)

// releaseScript: KEYS record, lease index; ARGV request id, owner, now,
// channel, payload. Only the lease owner under its request id releases:
// needs_recovery, lease expired, request id kept.
var releaseScript = redis.NewScript(prelude + `
local r = load(KEYS[1])
if not r or not unresolved(r) or r.request_id ~= ARGV[1] or r.owner ~= ARGV[2] then return 0 end
r.state = 'needs_recovery'
r.lease_until = ARGV[3]
r.owner = ''
store(KEYS[1], r)
redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
if tonumber(r.waiters) > 0 then redis.call('PUBLISH', ARGV[4], ARGV[5]) end
return 1
`)

// takeoverScript: KEYS record, lease index; ARGV owner, now, lease until.
// Compare-and-set on the lease: an unresolved key whose lease expired goes
// to owner; the record as taken, or nil.
var takeoverScript = redis.NewScript(prelude + `
local r = load(KEYS[1])
if not r or not unresolved(r) or tonumber(r.lease_until) > tonumber(ARGV[2]) then return false end
r.state = 'needs_recovery'
r.owner = ARGV[1]
r.lease_until = ARGV[3]
r.attempts = tostring(tonumber(r.attempts) + 1)
local v = store(KEYS[1], r)
redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
return v
`)

// leaseStaleScript: KEYS lease index, then candidate records; ARGV owner,
// now, lease until, created no later than, limit. The takeover of each
// candidate that is still stale, up to limit, in one step; index entries
// of records gone are dropped. The records taken.
var leaseStaleScript = redis.NewScript(prelude + `
local taken = {}
for i = 2, #KEYS do
	if #taken >= tonumber(ARGV[5]) then break end
	local r = load(KEYS[i])
	if not r or not unresolved(r) then
		redis.call('ZREM', KEYS[1], KEYS[i])
	elseif tonumber(r.lease_until) <= tonumber(ARGV[2]) and tonumber(r.created_at) <= tonumber(ARGV[4]) then
		r.state = 'needs_recovery'
		r.owner = ARGV[1]
		r.lease_until = ARGV[3]
		r.attempts = tostring(tonumber(r.attempts) + 1)
		taken[#taken + 1] = store(KEYS[i], r)
		redis.call('ZADD', KEYS[1], ARGV[3], KEYS[i])
	end
end
return taken
`)

// renewScript: KEYS lease index, then the leases' records; ARGV owner,
// lease until, then each lease's request id. Each lease still held (the
// owner token: owner and request id) is extended, never shortened; the
// positions (from 1) of the leases still held.
var renewScript = redis.NewScript(prelude + `
local held = {}
for i = 2, #KEYS do
	local r = load(KEYS[i])
	if r and unresolved(r) and r.owner == ARGV[1] and r.request_id == ARGV[i + 1] then
		if tonumber(r.lease_until) < tonumber(ARGV[2]) then
			r.lease_until = ARGV[2]
			store(KEYS[i], r)
			redis.call('ZADD', KEYS[1], ARGV[2], KEYS[i])
		end
		held[#held + 1] = i - 1
	end
end
return held
`)

// expireScript: KEYS finished index, then candidate records; ARGV now. A
// terminal record past its expiry becomes a tombstone (key text and
// request fields dropped, expiry moved to the forget time); Redis deletes
// it at the forget time (its TTL). Index entries of records gone or no
// longer terminal are dropped. The number compacted.
var expireScript = redis.NewScript(prelude + `
local n = 0
for i = 2, #KEYS do
	local r = load(KEYS[i])
	if not r or not terminal(r) or r.compacted then
		redis.call('ZREM', KEYS[1], KEYS[i])
	elseif tonumber(r.expires_at) <= tonumber(ARGV[1]) then
		r.key = nil
		r.amount = nil
		r.currency = nil
		r.order_id = nil
		r.description = nil
		r.owner = nil
		r.compacted = true
		r.expires_at = r.forget_at
		store(KEYS[i], r)
		redis.call('ZREM', KEYS[1], KEYS[i])
		n = n + 1
	end
end
return n
`)
