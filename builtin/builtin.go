// Package builtin is the table of built-in targets: the reference server,
// the zoo of realistic broken servers (must FAIL) and the garden of
// correct servers that choose differently (must never FAIL), each a
// variant of the reference-server binary. The table is the single place
// that says what bug a zoo member has and which invariant it must violate;
// the self-validation test, `idemcheck list` and the README are made from
// it.
//
// It imports only target (a member is a target.Target); cmd/idemcheck
// imports it. Its self-validation tests run certify against the table.
package builtin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/target"
)

// Member is one built-in target.
type Member struct {
	Name string
	Kind string // "reference", "broken" (the zoo) or "garden"
	// Bug is one line on the defect, as a reviewer would describe it.
	Bug string
	// Incident is what the defect does to money, as a postmortem title.
	Incident string
	// Family is the scenario family that finds the bug; Expect the checks
	// it fails, of which at least one must show (Verdict says how: FAILED,
	// or NON-STRICT for a protocol deviation that is safe).
	Family  string
	Expect  []string
	Verdict string
	// Policy overrides what the member declares (a promise it breaks).
	Policy *target.Policy
	// Denies is a level the member must never be certified at. A bug that
	// only one crash point reaches may go undrawn in a short run; then the
	// run must still not grant the level (it is UNKNOWN until every crash
	// point was seen to fire), which self-validation accepts in place of
	// Expect.
	Denies string
	// Flags are extra reference-server flags the variant needs.
	Flags []string
	// Provider is the payment provider the member charges through (a
	// gateway simulator profile; "" is stripe): its target names it
	// (gateway.provider) and the server is told (--gateway-provider).
	Provider string
	// EveryProvider says a garden member's choice is about providers: it
	// is certified under every profile, not only under Provider (the
	// builtin tests; a zoo member with a Provider is certified under the
	// others too, and must fail nothing there).
	EveryProvider bool
	// Protocol, when set, is the member's dialect in place of the
	// protocol's defaults: a success answer's fields at other places
	// (stripe-body), or a request shape of its own (own-shape). It is
	// what the member's target file would say under protocol:.
	Protocol *target.Protocol
	// Tenants and Organisations are the member's tenants (nil: the
	// defaults) and the organisations they share, as its target file
	// would list them.
	Tenants       []string
	Organisations map[string][]string
	// Needs are the stores the member keeps its keys in (target.Stores);
	// nil is PostgreSQL, the reference's. A member on another store also
	// selects it with Flags (--store).
	Needs []string
	// Variant is the reference-server --variant the member runs; "" is its
	// Name. A member that is the reference itself with another
	// configuration (Flags) names "reference": it certifies that
	// configuration of the reference, not a copy of it.
	Variant string
}

// TestPolicy is what the built-ins declare in test mode: short TTLs and
// leases so that late retries and crash recovery fit in seconds. The
// retry window (20×TTL) is what late-retry probes up to its end, so it
// sets that family's example time; it leaves a crash wave room for its
// strikes and one recovery window before every payment's final retry,
// also on a loaded machine (10×TTL is too little: under the load of six
// families at once a wave pushes some final retries past the promise, and
// their convergence goes undecided). max_wait is short enough that
// concurrent-duplicates' longest gateway latency
// (families.MaxGatewayLatency, 1.5 s) stays under the built-ins'
// gateway timeout. The recovery window is what the built-ins keep with
// testFlags: a dead owner's key is free a lease (1.5s) after its last
// renewal, before the kill, and a retry or the sweeper (every 250ms)
// recovers it at most about 1.5s after the restart that ends a wave's
// strikes. (A 1s lease leaves too little room for an owner stalled on a
// loaded machine: a sweeper takes it for dead and re-sends its charge,
// G1.) With the policy's ConvergeSlack (2s), a server that never recovers
// fails M6 about 3.5s into its first wave: the wave's last heal, the
// window, and one retry held max_wait.
var TestPolicy = target.Policy{TTL: time.Second, RetryWindow: 20 * time.Second, RecoveryWindow: 2 * time.Second, MaxWait: time.Second}

// declaring is TestPolicy with the production numbers prod declared.
func declaring(prod target.Production) *target.Policy {
	p := TestPolicy
	p.Production = prod
	return &p
}

// testFlags configure every built-in reference-server for TestPolicy: a
// gateway timeout above the longest drawn gateway latency, and a short
// lease (the owner renews it while its gateway call runs, so it need not
// outlast the gateway timeout).
var testFlags = []string{"--max-wait={{.MaxWait}}", "--lease=1500ms", "--gateway-timeout=2s", "--sweep-interval=250ms", "--recovery-after=1s", "--log-format=text"}

// Members is the table: the reference first, then the zoo, then the
// garden. A garden member's Family is the one that exercises its choice;
// it has no Expect: every check must end PASS or NON-STRICT.
var Members = []Member{
	{Name: "reference", Kind: "reference", Bug: "none: atomic claim, canonical fingerprint, wait-then-409, recorded intent, recovery, sweeper, TTL with tombstones"},
	{Name: "naive", Kind: "broken", Bug: "check-then-act: looks the key up, charges, then stores the response", Incident: "two concurrent duplicates both charge", Family: "concurrent-duplicates", Expect: []string{"M1"}, Verdict: "FAILED"},
	{Name: "no-fingerprint", Kind: "broken", Bug: "never compares the body: a reused key with a different body gets the first answer", Incident: "a different order is told it was paid", Family: "key-reuse", Expect: []string{"P1"}, Verdict: "FAILED"},
	{Name: "raw-fingerprint", Kind: "broken", Bug: "fingerprints the raw bytes, not canonical JSON", Incident: "a retry whose JSON was re-serialised is refused with 422 and the customer pays again elsewhere", Family: "key-reuse", Expect: []string{"P2"}, Verdict: "FAILED"},
	{Name: "inprocess-mutex", Kind: "broken", Bug: "serialises a key with an in-process mutex instead of a database claim", Incident: "safe with one replica; duplicates split across two replicas both charge", Family: "concurrent-duplicates", Expect: []string{"M1"}, Verdict: "FAILED"},
	{Name: "release-on-error", Kind: "broken", Bug: "deletes the key when the gateway call errors, so a retry starts afresh with a new request id", Incident: "charge-then-fail at the gateway, then the retry charges again", Family: "crash-window", Expect: []string{"M1"}, Verdict: "FAILED"},
	{Name: "stale-lease-new-id", Kind: "broken", Bug: "takes over an expired lease and re-runs the charge with a new gateway request id", Incident: "a crash inside the gateway call, then the retry charges again", Family: "crash-window", Expect: []string{"M1"}, Verdict: "FAILED"},
	{Name: "sweeper-fails-in-progress", Kind: "broken", Bug: "the sweeper marks stale in-progress keys failed without asking the gateway", Incident: "the customer is told the charge failed while the money moved", Family: "crash-window", Expect: []string{"M3"}, Verdict: "FAILED"},
	// short-expiry needs no flag: the variant pins the tombstone window to
	// the TTL (the reference reads --tombstone-ttl=0s as "the default", 30d).
	{Name: "short-expiry", Kind: "broken", Bug: "expires keys after the TTL with no tombstone, while promising a longer retry window", Incident: "a late retry within the promised window charges again", Family: "late-retry", Expect: []string{"E2"}, Verdict: "FAILED"},
	// global-keys keeps the reference's fingerprint: a colliding key with
	// another tenant's alike body gets that tenant's charge (M5), with a
	// different body a 422 (P2). Which the family meets first depends on
	// the seed.
	{Name: "global-keys", Kind: "broken", Bug: "keys are not scoped per tenant", Incident: "one merchant's customer receives another merchant's charge", Family: "tenants", Expect: []string{"M5", "P2"}, Verdict: "FAILED"},
	{Name: "no-wait-409", Kind: "broken", Bug: "answers 409 at once to a duplicate in flight instead of waiting", Incident: "safe, but clients retry in a tight loop", Family: "concurrent-duplicates", Expect: []string{"R3"}, Verdict: "NON-STRICT"},
	{Name: "sweeper-recharges", Kind: "broken", Bug: "an outbox worker re-sends indeterminate charges under a new gateway key, even after a retry resolved them", Incident: "the retry recovered the charge; seconds after the last answer the outbox charged the order again", Family: "crash-window", Expect: []string{"M1"}, Verdict: "FAILED"},
	{Name: "crash-blind", Kind: "broken", Bug: "recovers from gateway errors but never takes over a key whose owner died, and has no sweeper", Incident: "a replica killed during a gateway call leaves its order stuck in progress forever; a run that only slows the gateway sees nothing", Family: "crash-window", Expect: []string{"M6"}, Verdict: "FAILED", Denies: "L4"},
	// short-retention is found only by a probe past 3 TTLs: late-retry must
	// probe that late, or it certifies L5.
	{Name: "short-retention", Kind: "broken", Bug: "keeps keys for 3x the TTL while promising a retry window of 20x", Incident: "a retry near the end of the promised window charges again", Family: "late-retry", Expect: []string{"E2"}, Verdict: "FAILED"},
	// The Redis members: the flow's store is the Redis adapter
	// (reference/redisstore); the bug is in how the key is held there.
	{Name: "redis-get-set", Kind: "broken", Bug: "check-then-act on Redis: GET the key, charge, then SET the response", Incident: "two concurrent duplicates both miss the GET and both charge, each under its own gateway request id", Family: "concurrent-duplicates", Expect: []string{"M1"}, Verdict: "FAILED",
		Needs: []string{"redis"}, Flags: []string{"--store=redis"}},
	{Name: "redis-short-lock", Kind: "broken", Bug: "the in-progress key is a Redis lock with a 500ms TTL that is never renewed; a slower gateway call outlives it", Incident: "the lock lapses during a slow charge; the next duplicate claims the key afresh and charges again", Family: "concurrent-duplicates", Expect: []string{"M1"}, Verdict: "FAILED",
		Needs: []string{"redis"}, Flags: []string{"--store=redis"}},
	// resend-after-5xx is correct on Stripe; its row runs it on
	// Checkout.com, which keeps no result after a 5xx: a crash-window
	// charge-then-fail is paid again by its re-send.
	{Name: "resend-after-5xx", Kind: "broken", Bug: "recovers as on Stripe: after an indeterminate gateway answer it re-sends under the same gateway key without looking the payment up",
		Incident: "on Checkout.com, which keeps no result after a 5xx, a payment answered 5xx after the money moved is charged again", Family: "crash-window", Expect: []string{"M1"}, Verdict: "FAILED",
		Provider: "checkout"},
	// adyen-long-key is the reference with a composite gateway key that
	// fits Stripe's 255 characters, not Adyen's 64: on Adyen it sends no
	// key, and a crash-window re-send after a lost answer pays again.
	{Name: "adyen-long-key", Kind: "broken", Bug: "derives a 134-character gateway key (tenant:key-hash:request-id) and sends none where the provider takes fewer characters (Adyen: 64)",
		Incident: "on Adyen every payment goes without an idempotency key: a payment whose answer was lost is paid again by its re-send", Family: "crash-window", Expect: []string{"M1"}, Verdict: "FAILED",
		Provider: "adyen"},
	{Name: "no-recovery", Kind: "broken", Bug: "no lease takeover and no sweeper: a key whose owner crashed stays in progress", Incident: "after a crash the order can never be completed or retried", Family: "crash-window", Expect: []string{"M6"}, Verdict: "FAILED"},
	// passthrough-key declares the 30-day TTL it keeps in production,
	// against Stripe's 24h (the default provider key lifetime): the
	// gateway then forgets a key well inside the test-mode promise, and a
	// late retry charges again. Without that declaration it passes, with
	// G1's note that only the gateway held its orders to one charge; with
	// --gateway-idempotency off, concurrent duplicates both charge (M1).
	{Name: "passthrough-key", Kind: "broken", Bug: "keeps no record of its own: passes a key derived from the client's to the provider and lets the provider deduplicate",
		Incident: "a 30-day retry promise on a provider that keeps keys 24h: a retry on day 2 charges again", Family: "late-retry", Expect: []string{"M1"}, Verdict: "FAILED",
		Policy: declaring(target.Production{TTL: 30 * 24 * time.Hour})},
	// The claim races of public incidents (scenarios/incidents/public/).
	{Name: "redis-last-writer-wins", Kind: "broken", Bug: "check-then-act on Redis whose SET overwrites: the last duplicate to finish rebinds the key to its own charge", Incident: "two parallel duplicates both charge; the key ends bound to the charge that finished last", Family: "concurrent-duplicates", Expect: []string{"M1"}, Verdict: "FAILED",
		Needs: []string{"redis"}, Flags: []string{"--store=redis"}},
	{Name: "redis-read-back-lock", Kind: "broken", Bug: "a lock without compare-and-set: GET, SET, GET and compare the fingerprint read back, which every duplicate shares", Incident: "two identical concurrent retries both read back their own fingerprint, both take the key and both charge", Family: "concurrent-duplicates", Expect: []string{"M1"}, Verdict: "FAILED",
		Needs: []string{"redis"}, Flags: []string{"--store=redis"}},
	{Name: "redis-setex-claim", Kind: "broken", Bug: "claims the key with SETEX (no NX) after a GET: duplicates whose GETs both miss overwrite each other's in-flight record and both charge", Incident: "a racing duplicate silently overwrites the in-flight record, and both charge", Family: "concurrent-duplicates", Expect: []string{"M1"}, Verdict: "FAILED",
		Needs: []string{"redis"}, Flags: []string{"--store=redis"}},
	{Name: "replay-as-409", Kind: "broken", Bug: "no in-flight record, and a completed key is answered 409 (the stored body, no Retry-After) instead of replayed", Incident: "a duplicate in flight charges again; a retry after the answer is told to retry until the key expires", Family: "concurrent-duplicates", Expect: []string{"M1"}, Verdict: "FAILED"},
	{Name: "lock-wait-500", Kind: "broken", Bug: "a duplicate that finds the key in flight gets 500 at once instead of waiting for the owner, then 409 with Retry-After", Incident: "safe, but a duplicate of a charge in flight is told the server broke", Family: "concurrent-duplicates", Expect: []string{"R3"}, Verdict: "NON-STRICT"},
	// lease-is-retention's lease is the reference's default tombstone
	// window (30 days): longer than any run, as a day is longer than any
	// client's patience.
	{Name: "lease-is-retention", Kind: "broken", Bug: "the claim's lease is the retention window: a key whose owner died stays in progress until the record expires",
		Incident: "a replica killed mid-charge locks the payment: every retry gets 409 until the record expires", Family: "crash-window", Expect: []string{"M6"}, Verdict: "FAILED"},
	{Name: "failure-expires-with-lock", Kind: "broken", Bug: "a stored failure expires when the claim's lock does, not a TTL later, so a retry soon after a decline runs the charge again",
		Incident: "a declined payment's retry seconds later is charged: the client was told it failed", Family: "late-retry", Expect: []string{"M3"}, Verdict: "FAILED"},
	{Name: "release-non-2xx", Kind: "broken", Bug: "deletes the key after every answer of 400 or more (a decline, a rejection, a 5xx), so a retry re-runs the charge instead of replaying the failure",
		Incident: "a declined card's retry is charged: the client was told the payment failed", Family: "key-reuse", Expect: []string{"M3"}, Verdict: "FAILED"},
	{Name: "time-in-gateway-key", Kind: "broken", Bug: "the gateway Idempotency-Key is derived from the payment (tenant, order, amount, currency) and the current second, so a re-send a second later is a new payment",
		Incident: "a charge whose answer was lost is re-sent under a new gateway key and charged again; only the ledger shows it", Family: "crash-window", Expect: []string{"M1"}, Verdict: "FAILED"},
	{Name: "release-wrong-key", Kind: "broken", Bug: "the claim is a lock held for the retention window; the error path deletes the key without its tenant prefix, deleting nothing, so the lock stays",
		Incident: "after a gateway error every retry gets 409 until the lock expires", Family: "crash-window", Expect: []string{"M6"}, Verdict: "FAILED"},
	// tz-naive-expiry keeps keys for the retry window it promises (its
	// tombstone window), so in a UTC session it would keep every promise;
	// its database role's session is in Asia/Kolkata (the incident's
	// deployment), which makes its guard reclaim live keys.
	{Name: "tz-naive-expiry", Kind: "broken", Bug: "reclaims a key when its expires_at (timestamp without time zone, written from the app's UTC clock) is before the database's now()",
		Incident: "a database session in Asia/Kolkata reads every live key as expired: a retry a second after the answer is charged again", Family: "late-retry", Expect: []string{"M1", "E1"}, Verdict: "FAILED",
		Flags: []string{"--tombstone-ttl=" + TestPolicy.RetryWindow.String()}},
	// look-alike-key names the order in the charge's metadata, as the
	// reference does, so the gateway refuses the reused key (M6) rather
	// than replaying the first order's charge (M2, equal parameters).
	{Name: "look-alike-key", Kind: "broken", Bug: "the gateway Idempotency-Key is derived from what the payment is (tenant, amount, currency), not which order it pays",
		Incident: "a customer's second order of the same price is sent under the first's gateway key: the gateway refuses it and the order never completes", Family: "look-alike", Expect: []string{"M6"}, Verdict: "FAILED"},
	{Name: "route-template-key", Kind: "broken", Bug: "binds a key to the route template and the body, not the concrete path: the same key and body for another order replays the first order's charge",
		Incident: "one key and body sent for a second order is answered with the first order's charge: the second order was never charged", Family: "key-reuse", Expect: []string{"P1"}, Verdict: "FAILED",
		Protocol: &target.Protocol{Path: zooOrderPath, Body: mustBody(OrderInPathBody)}},
	{Name: "anonymous-namespace", Kind: "broken", Bug: "requests without credentials share one namespace (\"anonymous\") and no body is compared: a second client's different request under the same key gets the first one's answer",
		Incident: "two customers of a public checkout pick the same key: the second is told it paid, with the first one's charge", Family: "tenants", Expect: []string{"P1"}, Verdict: "FAILED",
		Protocol: &target.Protocol{Anonymous: true}},
	// reaches-oracle charges as the reference does; it fails T1 (a
	// run-wide check, in the report's run rows) by reaching for the
	// gateway's control API on its GATEWAY_URL after every charge.
	{Name: "reaches-oracle", Kind: "broken", Bug: "after every charge it clears the gateway's faults and resets its ledger through /_sim/ on its GATEWAY_URL, and tries toxiproxy's API",
		Incident: "a server that resets the ledger after a double charge and clears the fault armed for its crash would leave no evidence against it", Family: "concurrent-duplicates", Expect: []string{"T1"}, Verdict: "FAILED"},
	{Name: "key-before-auth", Kind: "broken", Bug: "records a key before authenticating: a request refused 401 binds its key, and the same request after re-authentication is refused 422 for good",
		Incident: "a payment sent with an expired token is refused; after re-authentication its retry with the same key is refused as another request, for good", Family: "protocol", Expect: []string{"P2"}, Verdict: "FAILED"},
	// org-scoped-keys reads an organisation from a token's prefix
	// (zoo.Organisation); its target declares two principals of acme
	// beside a tenant of another organisation. Like global-keys, an alike
	// body gets the other principal's charge (M5), a different one a 422
	// (P2).
	{Name: "org-scoped-keys", Kind: "broken", Bug: "keys are scoped per organisation, not per principal: two principals of one organisation share a key's record",
		Incident: "two API keys of one account pick the same key: the second is answered with the first one's charge", Family: "tenants", Expect: []string{"M5", "P2"}, Verdict: "FAILED",
		Tenants: orgTenants, Organisations: orgPrincipals},
	// lost-reclaim-409 keeps keys for the retry window it promises (its
	// tombstone window: longer, and a key kept past the checker's epoch
	// is judged against the next one) and sweeps one when a request
	// meets it past that: late-retry's duplicates past the promise meet
	// the sweep between their claims and their reads, and race to
	// re-claim. Its window is 2s, so that a whole late-retry example,
	// which reaches past the promise, fits self-validation's budget with
	// the set-up (a part stays inside the promise, and leaves E2 UNKNOWN
	// for the rest). Like exact-ttl's, its checks at the promise's edge
	// may end UNKNOWN when probes are held up (load, other examples'
	// relaunches).
	{Name: "lost-reclaim-409", Kind: "broken", Bug: "sweeps a key a request meets past its window, then reads it back; a request whose key vanished re-claims it, and when that re-claim loses answers 409 in progress at once, without reading what the winner left",
		Incident: "safe, but a duplicate that lost the race for a swept key is told at once that its own request is still in progress", Family: "late-retry", Expect: []string{"R3"}, Verdict: "NON-STRICT",
		Policy: &lostReclaimPolicy, Flags: []string{"--tombstone-ttl=" + lostReclaimPolicy.RetryWindow.String()}},
	{Name: "store-if-delivered", Kind: "broken", Bug: "deletes a key whose answer could not be delivered (the client's connection gone when the charge finished), so the client's retry charges again",
		Incident: "the client's connection drops while the gateway charges; the answer is lost, the key forgotten, and the retry charges again", Family: "crash-window", Expect: []string{"M1"}, Verdict: "FAILED"},

	{Name: "opaque-keys", Kind: "garden", Bug: "none: the key header is opaque, so the quoted form is a different key (as at Stripe)", Family: "protocol"},
	{Name: "in-flight-429", Kind: "garden", Bug: "none: a duplicate in flight is answered 429 with Retry-After instead of 409", Family: "concurrent-duplicates"},
	// exact-ttl promises no more than it keeps: retry_window = ttl.
	{Name: "exact-ttl", Kind: "garden", Bug: "none: keys expire exactly at the TTL, which is also the retry window it promises", Family: "late-retry",
		Policy: &target.Policy{TTL: TestPolicy.TTL, RetryWindow: TestPolicy.TTL, RecoveryWindow: TestPolicy.RecoveryWindow, MaxWait: TestPolicy.MaxWait}},
	{Name: "stripe-body", Kind: "garden", Bug: "none: Stripe-shaped bodies, the order under metadata.order_id", Family: "concurrent-duplicates",
		Protocol: &target.Protocol{Fields: target.Fields{OrderID: "/metadata/order_id"}}},
	// own-shape's protocol is examples/own-shape.yaml's (a test holds
	// them equal).
	{Name: "own-shape", Kind: "garden", Bug: "none: its own request shape (POST /orders/{order_id}/payments, a form body requiring customer and payment_method) and a currency answered in capitals", Family: "key-reuse",
		Protocol: &target.Protocol{Path: "/orders/{order_id}/payments", Encoding: target.EncodingForm, Body: mustBody(OwnShapeBody)}},
	{Name: "redis-store", Kind: "garden", Bug: "none: keys in Redis: SET NX PX claim, owner token checked by a Lua script on every write, lease renewed during the gateway call, intent recorded before the call", Family: "crash-window",
		Needs: []string{"redis"}, Flags: []string{"--store=redis"}},
	{Name: "mysql-store", Kind: "garden", Bug: "none: keys in MySQL: INSERT … ON DUPLICATE KEY claim, conditional updates by request id and owner, leases renewed during the gateway call, intent recorded before the call", Family: "crash-window",
		Needs: []string{"mysql"}, Flags: []string{"--store=mysql"}},
	// payment-intents is the reference charging through Stripe's
	// PaymentIntents: crash-window exercises the gateway call it changes
	// (the key sent with it, the answer read from it, the search that
	// recovers it).
	{Name: "payment-intents", Kind: "garden", Variant: "reference", Bug: "none: charges through PaymentIntents (create with confirm=true) instead of /v1/charges", Family: "crash-window",
		Flags: []string{"--gateway-api=payment_intents"}},
	// The next three name the order at the gateway their own way, as real
	// shops do; none declares protocol.trace: first contact finds it.
	// crash-window exercises their recovery, which finds a charge by
	// where they named it (or by request id).
	{Name: "shop-order", Kind: "garden", Variant: "reference", Bug: "none: the order forwarded to the gateway as metadata[shop_order]", Family: "crash-window",
		Flags: []string{"--gateway-order=metadata[shop_order]"}},
	{Name: "order-in-description", Kind: "garden", Variant: "reference", Bug: "none: the order named only in the charge's description (\"Order <id>\")", Family: "crash-window",
		Flags: []string{"--gateway-order=description"}},
	// order-in-path's order is in its path alone, so key-reuse's
	// different order changes only the path.
	{Name: "order-in-path", Kind: "garden", Bug: "none: the order in the path only (POST /orders/{order_id}/payments, a JSON body without it); a key is bound to the concrete path", Family: "key-reuse",
		Protocol: &target.Protocol{Path: zooOrderPath, Body: mustBody(OrderInPathBody)}},
	{Name: "anonymous-shared", Kind: "garden", Bug: "none: takes requests without credentials into one shared namespace, bodies compared as for any tenant", Family: "tenants",
		Protocol: &target.Protocol{Anonymous: true}},
	// looks-up-first is correct on every provider, none included: the
	// rule a server on Checkout.com must follow, kept everywhere.
	{Name: "looks-up-first", Kind: "garden", Bug: "none: looks every re-send's payment up by its order before re-sending it, on every provider (Adyen, which has no lookup, keeps the key's result)", Family: "crash-window",
		EveryProvider: true},
	// org-principals is the reference with org-scoped-keys' tenants: keys
	// scoped per principal, whatever organisation it belongs to.
	{Name: "org-principals", Kind: "garden", Variant: "reference", Bug: "none: principals that share an organisation (declared under organisations), each a namespace of its own", Family: "tenants",
		Tenants: orgTenants, Organisations: orgPrincipals},
	{Name: "order-untraced", Kind: "garden", Variant: "reference", Bug: "none: nothing of the order forwarded to the gateway (money traced by amount)", Family: "crash-window",
		Flags: []string{"--gateway-order=none"}},
}

// ServerVariant is the reference-server --variant the member runs.
func (m Member) ServerVariant() string {
	if m.Variant != "" {
		return m.Variant
	}
	return m.Name
}

// OwnShapeBody is own-shape's protocol.body: the payment's values, the
// fields the service requires, and the order again under metadata.
const OwnShapeBody = `amount: "{{.Amount}}"
currency: "{{.Currency}}"
description: "{{.Description}}"
customer: cus_123
payment_method: pm_card_visa
metadata:
  order_id: "{{.OrderID}}"
`

// zooOrderPath is the path of the members that take the order in the
// path only (zoo.OrderPathTemplate; builtin imports only target).
const zooOrderPath = "/orders/{order_id}/payments"

// OrderInPathBody is their protocol.body: the payment's values and a
// field the service requires, and no order.
const OrderInPathBody = `amount: "{{.Amount}}"
currency: "{{.Currency}}"
customer: cus_123
`

// lostReclaimPolicy is TestPolicy with a retry window of 2s.
var lostReclaimPolicy = target.Policy{TTL: TestPolicy.TTL, RetryWindow: 2 * time.Second, RecoveryWindow: TestPolicy.RecoveryWindow, MaxWait: TestPolicy.MaxWait}

// orgTenants and orgPrincipals are the tenants of the members that
// declare an organisation: two principals of acme (zoo.Organisation reads
// it from the token) and a tenant of globex.
var (
	orgTenants    = []string{"acme.alice", "acme.bob", "globex.carol"}
	orgPrincipals = map[string][]string{"acme": {"acme.alice", "acme.bob"}}
)

// mustBody parses a body template written in this file.
func mustBody(src string) *target.Body {
	b, err := target.ParseBody(src)
	if err != nil {
		panic(fmt.Sprintf("builtin: a body template: %v", err))
	}
	return b
}

// ErrUnknown is returned for a name that is not in the table.
var ErrUnknown = errors.New("unknown built-in target")

// ErrNoBinary means the reference-server binary could not be found.
var ErrNoBinary = errors.New("reference-server binary not found (run `make build`, or set IDEMCHECK_BIN_DIR)")

// Lookup finds a member by name.
func Lookup(name string) (Member, error) {
	for _, m := range Members {
		if m.Name == name {
			return m, nil
		}
	}
	return Member{}, fmt.Errorf("%w %q: expected one of %s", ErrUnknown, name, strings.Join(Names(), ", "))
}

// Names lists the built-in targets in table order.
func Names() []string {
	names := make([]string, len(Members))
	for i, m := range Members {
		names[i] = m.Name
	}
	return names
}

// Zoo lists the broken members.
func Zoo() []Member { return ofKind("broken") }

// Garden lists the correct members that choose differently.
func Garden() []Member { return ofKind("garden") }

func ofKind(kind string) []Member {
	var out []Member
	for _, m := range Members {
		if m.Kind == kind {
			out = append(out, m)
		}
	}
	return out
}

// Target builds the target of a member, running the reference-server
// binary found in binDir ("" = FindBinDir).
func (m Member) Target(binDir string) (*target.Target, error) {
	if binDir == "" {
		var err error
		if binDir, err = FindBinDir(); err != nil {
			return nil, err
		}
	}
	pol := TestPolicy
	if m.Policy != nil {
		pol = *m.Policy
	}
	args := append(append([]string{"--variant=" + m.ServerVariant()}, testFlags...), m.Flags...)
	env := map[string]string{"LISTEN_ADDR": "{{.ListenAddr}}", "GATEWAY_URL": "{{.GatewayURL}}",
		"GATEWAY_API_KEY": "{{.GatewayAPIKey}}", "IDEMPOTENCY_TTL": "{{.TTL}}"}
	needs := m.Needs
	if needs == nil {
		needs = []string{"postgres"}
	}
	for _, n := range needs {
		if v, ok := storeEnv[n]; ok {
			env[v[0]] = v[1]
		}
	}
	t := &target.Target{
		Name: m.Name, Description: m.Bug, Needs: needs,
		Start:  target.Start{Command: filepath.Join(binDir, "reference-server"), Args: args, Env: env},
		Policy: pol,
	}
	if m.Protocol != nil {
		t.Protocol = *m.Protocol
	}
	t.Tenants, t.Organisations = m.Tenants, m.Organisations
	if m.Provider != "" {
		t.Gateway.Provider = m.Provider
		if m.Provider != providerNone { // none speaks Stripe's API: the server's default
			t.Start.Args = append(t.Start.Args, "--gateway-provider="+m.Provider)
		}
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("built-in %s: %w", m.Name, err)
	}
	return t, nil
}

// providerNone is the gateway profile without idempotency
// (gatewaysim.ProviderNone), whose API is Stripe's.
const providerNone = "none"

// storeEnv is the variable through which reference-server reads each
// store's address, and its template.
var storeEnv = map[string][2]string{
	"postgres": {"DATABASE_URL", "{{.DatabaseURL}}"},
	"redis":    {"REDIS_URL", "{{.RedisURL}}"},
	"mysql":    {"MYSQL_DSN", "{{.MySQLDSN}}"},
}

// FindBinDir finds the directory holding reference-server: the
// IDEMCHECK_BIN_DIR variable, then the idemcheck executable's own
// directory, then ./bin, then PATH.
func FindBinDir() (string, error) {
	var dirs []string
	if d := os.Getenv("IDEMCHECK_BIN_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	dirs = append(dirs, "bin")
	if p, err := exec.LookPath("reference-server"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if st, err := os.Stat(filepath.Join(d, "reference-server")); err == nil && !st.IsDir() {
			return filepath.Abs(d)
		}
	}
	return "", ErrNoBinary
}
