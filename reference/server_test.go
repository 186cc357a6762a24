package reference_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/internal/pgtest"
	"github.com/idemcheck/idemcheck/reference"
)

// Fifty concurrent duplicates spread over two replicas on one database get
// one charge and byte-identical answers. A latency fault on the gateway holds
// the owner, so the duplicates really are in flight together and wait (the
// LISTEN/NOTIFY path), rather than arriving after the owner finished.
func TestServer_ConcurrentDuplicatesTwoReplicas(t *testing.T) {
	for _, latency := range []time.Duration{0, 150 * time.Millisecond} {
		t.Run(fmt.Sprintf("gateway_latency_%s", latency), func(t *testing.T) {
			e := newEnv(t, envOptions{replicas: 2})
			order := uniq("ord")
			if latency > 0 {
				e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Latency, Match: gatewaysim.Match{OrderID: order}, Latency: latency})
			}
			c := charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(order, 1250)}
			const n = 50
			replies := make([]reply, n)
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					replies[i], errs[i] = e.post(e.replicas[i%2].url, c)
				})
			}
			close(start)
			wg.Wait()
			replayed := 0
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("request %d: %v", i, errs[i])
				}
				if replies[i].status != http.StatusCreated {
					t.Fatalf("request %d: %s", i, replies[i])
				}
				if !bytes.Equal(replies[i].body, replies[0].body) {
					t.Fatalf("answers differ:\n%s\n%s", replies[0].body, replies[i].body)
				}
				if replies[i].header.Get("Idempotent-Replayed") == "true" {
					replayed++
				}
			}
			if replayed != n-1 {
				t.Errorf("%d replayed answers, want %d", replayed, n-1)
			}
			ledger := e.chargesFor(order)
			if len(ledger) != 1 {
				t.Fatalf("ledger holds %d charges for the order, want 1: %+v", len(ledger), ledger)
			}
			if got := replies[0].id(t); got != ledger[0].ID {
				t.Errorf("answer names charge %s, ledger %s", got, ledger[0].ID)
			}
			var claims, waits float64
			for _, r := range e.replicas {
				claims += counterValue(r.srv.Metrics().Claims)
				waits += counterValue(r.srv.Metrics().Waits)
			}
			if claims != 1 || (latency > 0 && waits == 0) {
				t.Errorf("metrics: %v claims, %v waits", claims, waits)
			}
		})
	}
}

// Semantically equal JSON (key order, whitespace, number spelling, escapes)
// is the same request: a replay, not a 422 and not a second charge.
func TestServer_ReorderedJSONIsReplay(t *testing.T) {
	e := newEnv(t, envOptions{})
	order := uniq("ord")
	c := charge{tenant: uniq("sk"), key: uniq("key"),
		body: fmt.Sprintf(`{"amount":1250,"currency":"usd","order_id":%q,"metadata":{"a":1,"b":[1,2],"c":"A"}}`, order)}
	first := e.mustPost(e.replicas[0].url, c)
	if first.status != http.StatusCreated {
		t.Fatalf("first: %s", first)
	}
	c.body = fmt.Sprintf(` { "metadata" : { "c":"\u0041", "b":[1, 2.0], "a":1e0 },
		"order_id": %q, "currency":"usd", "amount": 1.25e3 } `, order)
	again := e.mustPost(e.replicas[0].url, c)
	if again.status != http.StatusCreated || !bytes.Equal(again.body, first.body) {
		t.Fatalf("reordered JSON: %s, want %s", again, first)
	}
	if again.header.Get("Idempotent-Replayed") != "true" {
		t.Error("replay lacks Idempotent-Replayed: true")
	}
	if n := len(e.chargesFor(order)); n != 1 {
		t.Fatalf("ledger holds %d charges, want 1", n)
	}
}

// The same key with a different body is refused with 422 problem+json and
// moves no money, whichever field changed; the original still replays.
func TestServer_DifferentBodyIs422(t *testing.T) {
	e := newEnv(t, envOptions{})
	order := uniq("ord")
	tenant, key := uniq("sk"), uniq("key")
	orig := fmt.Sprintf(`{"amount":1250,"currency":"usd","order_id":%q,"description":"d","metadata":{"n":{"x":1}}}`, order)
	first := e.mustPost(e.replicas[0].url, charge{tenant: tenant, key: key, body: orig})
	if first.status != http.StatusCreated {
		t.Fatalf("first: %s", first)
	}
	mutations := map[string]string{
		"amount":      strings.Replace(orig, "1250", "1251", 1),
		"currency":    strings.Replace(orig, `"usd"`, `"eur"`, 1),
		"currency_uc": strings.Replace(orig, `"usd"`, `"USD"`, 1), // invalid field, but the key is bound: 422
		"order":       strings.Replace(orig, order, order+"x", 1),
		"description": strings.Replace(orig, `"d"`, `"e"`, 1),
		"nested":      strings.Replace(orig, `{"x":1}`, `{"x":2}`, 1),
		"added":       strings.Replace(orig, `"description"`, `"extra":true,"description"`, 1),
	}
	for name, body := range mutations {
		r := e.mustPost(e.replicas[0].url, charge{tenant: tenant, key: key, body: body})
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %s, want 422", name, r)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("%s: Content-Type %q", name, ct)
		}
	}
	if n := len(e.sim.Ledger()); n != 1 {
		t.Fatalf("ledger holds %d charges, want 1", n)
	}
	if r := e.mustPost(e.replicas[0].url, charge{tenant: tenant, key: key, body: orig}); !bytes.Equal(r.body, first.body) {
		t.Fatalf("original no longer replays: %s", r)
	}
}

// Keys are scoped per tenant: one key under two bearer tokens is two requests.
func TestServer_TenantIsolation(t *testing.T) {
	e := newEnv(t, envOptions{})
	key := uniq("key")
	a := e.mustPost(e.replicas[0].url, charge{tenant: uniq("sk_a"), key: key, body: chargeBody(uniq("ord"), 100)})
	b := e.mustPost(e.replicas[0].url, charge{tenant: uniq("sk_b"), key: key, body: chargeBody(uniq("ord"), 200)})
	if a.status != http.StatusCreated || b.status != http.StatusCreated {
		t.Fatalf("a: %s, b: %s", a, b)
	}
	if a.id(t) == b.id(t) {
		t.Fatal("two tenants got the same charge")
	}
}

// A decline is definitive: stored and replayed, never retried into a charge.
func TestServer_DeclineIsReplayed(t *testing.T) {
	e := newEnv(t, envOptions{})
	order := uniq("ord")
	e.sim.AddFault(gatewaysim.Fault{Kind: gatewaysim.Decline, Match: gatewaysim.Match{OrderID: order}, Times: 1})
	c := charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(order, 500)}
	first := e.mustPost(e.replicas[0].url, c)
	if first.status != http.StatusPaymentRequired {
		t.Fatalf("first: %s", first)
	}
	errObj, _ := first.json(t)["error"].(map[string]any)
	if errObj["type"] != "card_error" || errObj["code"] != "card_declined" {
		t.Fatalf("decline body: %s", first.body)
	}
	again := e.mustPost(e.replicas[0].url, c)
	if again.status != http.StatusPaymentRequired || !bytes.Equal(again.body, first.body) ||
		again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %s", again)
	}
	if l := e.chargesFor(order); len(l) != 1 || l[0].Succeeded() {
		t.Fatalf("ledger: %+v", l)
	}
}

// Indeterminate gateway answers leave the key claimed under its recorded
// request id and tell the client to retry; the retry re-sends that same id,
// and the gateway's own idempotency turns it into exactly one charge.
func TestServer_IndeterminateOutcomes(t *testing.T) {
	for _, kind := range []gatewaysim.FaultKind{gatewaysim.FailBeforeCharge, gatewaysim.ChargeThenFail, gatewaysim.ChargeThenDrop} {
		t.Run(string(kind), func(t *testing.T) {
			e := newEnv(t, envOptions{replicas: 2})
			order := uniq("ord")
			e.sim.AddFault(gatewaysim.Fault{Kind: kind, Match: gatewaysim.Match{OrderID: order}, Times: 1})
			c := charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(order, 700)}
			first := e.mustPost(e.replicas[0].url, c)
			if first.status != http.StatusBadGateway || first.header.Get("Retry-After") == "" {
				t.Fatalf("first: %s (Retry-After %q), want 502 with Retry-After", first, first.header.Get("Retry-After"))
			}
			state, rid, _, err := e.row(c.tenant, c.key)
			if err != nil || state != reference.StateNeedsRecovery {
				t.Fatalf("after indeterminate answer: state %q, err %v", state, err)
			}
			again := e.mustPost(e.replicas[1].url, c) // the other replica recovers
			if again.status != http.StatusCreated {
				t.Fatalf("retry: %s", again)
			}
			ledger := e.chargesFor(order)
			if len(ledger) != 1 || ledger[0].ID != again.id(t) {
				t.Fatalf("ledger %+v, answer %s", ledger, again)
			}
			if ledger[0].IdempotencyKey != rid {
				t.Errorf("gateway key %q, recorded request id %q", ledger[0].IdempotencyKey, rid)
			}
			if third := e.mustPost(e.replicas[0].url, c); !bytes.Equal(third.body, again.body) {
				t.Errorf("replay after recovery: %s", third)
			}
		})
	}
}

// A duplicate of a request stuck at the gateway waits MaxWait, then gets 409
// with Retry-After; once the gateway answers, the result replays.
func TestServer_WaitThen409(t *testing.T) {
	e := newEnv(t, envOptions{config: func(c *reference.Config) { c.MaxWait = 200 * time.Millisecond }})
	order := uniq("ord")
	c := charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(order, 900)}
	hold, ownerDone := e.holdOwner(e.replicas[0].url, c, order)

	dup := e.mustPost(e.replicas[0].url, c)
	if dup.status != http.StatusConflict || dup.header.Get("Retry-After") == "" {
		t.Fatalf("duplicate: %s (Retry-After %q)", dup, dup.header.Get("Retry-After"))
	}
	if err := e.sim.Release(hold.HoldID); err != nil {
		t.Fatal(err)
	}
	owner := <-ownerDone
	if owner.status != http.StatusCreated || owner.id(t) != hold.ChargeID {
		t.Fatalf("owner: %s", owner)
	}
	if r := e.mustPost(e.replicas[0].url, c); !bytes.Equal(r.body, owner.body) {
		t.Fatalf("replay: %s", r)
	}
}

// Replicas migrating the same empty database at once all succeed.
func TestMigrate_ConcurrentReplicas(t *testing.T) {
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		pool := openPool(t, url)
		wg.Go(func() { errs <- reference.Migrate(context.Background(), pool) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// A live owner keeps its lease however long the gateway takes: the owner
// renews it while its call runs, so a duplicate on another replica past
// the lease's first expiry waits and is answered 409 instead of taking the
// key over, and the owner's answer is the charge.
func TestServer_LiveOwnerKeepsItsLease(t *testing.T) {
	const lease = 300 * time.Millisecond
	e := newEnv(t, envOptions{replicas: 2, config: func(c *reference.Config) {
		c.Lease, c.MaxWait = lease, 100*time.Millisecond
	}})
	order := uniq("ord")
	c := charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(order, 4100)}
	hold, ownerDone := e.holdOwner(e.replicas[0].url, c, order)

	var owner string
	var attempts int
	lease4 := func() bool {
		var created, until time.Time
		err := e.db.QueryRow(context.Background(),
			`SELECT created_at, lease_until, lease_owner, attempts FROM idempotency_keys WHERE tenant = $1 AND key_hash = $2`,
			reference.TenantID(c.tenant), reference.KeyHash(c.key)).Scan(&created, &until, &owner, &attempts)
		return err == nil && until.Sub(created) >= 4*lease
	}
	eventually(t, 10*time.Second, "the owner's lease renewed past four leases", lease4)
	wantOwner, wantAttempts := owner, attempts

	if dup := e.mustPost(e.replicas[1].url, c); dup.status != http.StatusConflict {
		t.Fatalf("duplicate past the first lease: %s, want 409 (the owner is alive)", dup)
	}
	if !lease4() || owner != wantOwner || attempts != wantAttempts {
		t.Fatalf("after the duplicate: owner %q attempts %d, want %q %d (no takeover)", owner, attempts, wantOwner, wantAttempts)
	}
	if err := e.sim.Release(hold.HoldID); err != nil {
		t.Fatal(err)
	}
	if r := <-ownerDone; r.status != http.StatusCreated || r.id(t) != hold.ChargeID {
		t.Fatalf("owner: %s, want the held charge %s", r, hold.ChargeID)
	}
	if l := e.chargesFor(order); len(l) != 1 {
		t.Fatalf("ledger holds %d charges for the order, want 1", len(l))
	}
}

// An owner slow between its claim and its gateway call renews at once:
// the first renewal is due a third of a lease after the claim, not after
// the call starts. With an hour's lease granted an hour ago, the renewal
// comes at once, not in 20 minutes; a lease taken over by another owner
// is not renewed.
func TestLease_FirstRenewalCountsFromTheGrant(t *testing.T) {
	e := newEnv(t, envOptions{replicas: -1})
	store := reference.NewPostgresStore(e.db)
	now := time.Now()
	claim := heldClaim(t, store, "slow-owner", now.Add(-time.Hour), time.Hour)
	keeper := reference.NewKeeper(store, claim.Owner, time.Hour, time.Now, testLogger(t))
	release := keeper.Hold(reference.Lease{Tenant: claim.Tenant, KeyHash: claim.KeyHash, RequestID: claim.RequestID, Granted: claim.Now})
	eventually(t, 10*time.Second, "the lease renewed to an hour from now", func() bool {
		return !leaseUntil(t, e, claim).Before(now.Add(time.Hour))
	})
	release()

	before := leaseUntil(t, e, claim)
	lease := reference.Lease{Tenant: claim.Tenant, KeyHash: claim.KeyHash, RequestID: claim.RequestID}
	held, err := store.RenewLeases(t.Context(), "not-the-owner", []reference.Lease{lease}, time.Now().Add(time.Hour), time.Hour)
	if len(held) != 0 || err != nil {
		t.Fatalf("another owner renewed the lease: %v %v", held, err)
	}
	if !leaseUntil(t, e, claim).Equal(before) {
		t.Fatal("another owner's renewal moved the lease")
	}
}

// One keeper renews all the claims its replica holds together, in one
// statement a tick: every lease is moved to the same instant, tick after
// tick, and a released claim is renewed no more (a renewal already under
// way when it is released may still land).
func TestKeeper_RenewsAllHeldClaimsInOneStatement(t *testing.T) {
	e := newEnv(t, envOptions{replicas: -1})
	store := reference.NewPostgresStore(e.db)
	const length, n = 1500 * time.Millisecond, 12
	keeper := reference.NewKeeper(store, "keeper-owner", length, time.Now, testLogger(t))
	claims := make([]reference.Claim, n)
	granted := time.Now()
	for i := range claims {
		claims[i] = heldClaim(t, store, "keeper-owner", granted, length)
	}
	releases := make([]func(), n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := claims[i]
			releases[i] = keeper.Hold(reference.Lease{Tenant: c.Tenant, KeyHash: c.KeyHash, RequestID: c.RequestID, Granted: c.Now})
		})
	}
	wg.Wait()
	for tick := range 3 {
		var at time.Time
		eventually(t, 5*time.Second, fmt.Sprintf("tick %d renewed every claim to one instant", tick+1), func() bool {
			first := leaseUntil(t, e, claims[0])
			for _, c := range claims[1:] {
				if !leaseUntil(t, e, c).Equal(first) {
					return false
				}
			}
			if first.After(at) && first.After(claims[0].Now.Add(length)) {
				at = first
				return true
			}
			return false
		})
	}
	releases[0]()
	time.Sleep(length / 3)
	released := leaseUntil(t, e, claims[0])
	time.Sleep(2 * length)
	if !leaseUntil(t, e, claims[0]).Equal(released) {
		t.Error("a released claim was renewed")
	}
	if !leaseUntil(t, e, claims[1]).After(released) {
		t.Error("a claim still held was not renewed")
	}
	for _, r := range releases[1:] {
		r()
	}
}

// heldClaim claims a fresh key for owner with a lease granted at granted.
func heldClaim(t *testing.T, store reference.Store, owner string, granted time.Time, lease time.Duration) reference.Claim {
	t.Helper()
	tenant, key := uniq("sk"), uniq("key")
	claim := reference.Claim{Tenant: reference.TenantID(tenant), KeyHash: reference.KeyHash(key), Key: key, Fingerprint: []byte("fp"),
		RequestID: uniq("req"), Params: reference.ChargeParams{Amount: 100, Currency: "usd", OrderID: uniq("ord")},
		Owner: owner, Now: granted, Lease: lease, TTL: 2 * time.Hour, Forget: 2 * time.Hour}
	if ok, _, err := store.Claim(t.Context(), claim); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	return claim
}

func leaseUntil(t *testing.T, e *env, c reference.Claim) time.Time {
	t.Helper()
	var until time.Time
	if err := e.db.QueryRow(t.Context(), `SELECT lease_until FROM idempotency_keys WHERE tenant = $1 AND key_hash = $2`,
		c.Tenant, c.KeyHash).Scan(&until); err != nil {
		t.Fatal(err)
	}
	return until
}
