package reference_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

// After the TTL a finished key is compacted into a tombstone; a late retry
// of the same request still gets the original charge back (no second
// charge), a different body is still refused; after the tombstone window
// the key is forgotten and a retry is a new request. Driven by the injected
// clock: the SQL compares against the server's time, not the database's.
func TestServer_TombstoneReplayAfterTTL(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, envOptions{clock: clock, config: func(c *reference.Config) {
		c.TTL = time.Hour
		c.TombstoneTTL = 48 * time.Hour
	}})
	srv := e.replicas[0].srv
	order := uniq("ord")
	c := charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(order, 4200)}
	first := e.mustPost(e.replicas[0].url, c)
	if first.status != http.StatusCreated {
		t.Fatalf("first: %s", first)
	}

	clock.Advance(59 * time.Minute) // inside the TTL: nothing to expire
	if st := sweep(t, srv); st.Compacted != 0 {
		t.Fatalf("compacted inside the TTL: %+v", st)
	}
	clock.Advance(2 * time.Minute)
	if st := sweep(t, srv); st.Compacted != 1 {
		t.Fatalf("sweep after TTL: %+v, want 1 compacted", st)
	}
	if _, _, compacted, err := e.row(c.tenant, c.key); err != nil || !compacted {
		t.Fatalf("row not a tombstone: compacted=%v err=%v", compacted, err)
	}
	late := e.mustPost(e.replicas[0].url, c)
	if late.status != http.StatusCreated || !bytes.Equal(late.body, first.body) {
		t.Fatalf("late retry: %s, want the original %s", late, first)
	}
	other := c
	other.body = strings.Replace(c.body, "4200", "4201", 1)
	if r := e.mustPost(e.replicas[0].url, other); r.status != http.StatusUnprocessableEntity {
		t.Fatalf("different body on a tombstone: %s, want 422", r)
	}
	if n := len(e.chargesFor(order)); n != 1 {
		t.Fatalf("ledger holds %d charges, want 1", n)
	}

	clock.Advance(48 * time.Hour) // past the tombstone window
	if st := sweep(t, srv); st.Forgotten != 1 {
		t.Fatalf("sweep after tombstone TTL: %+v, want 1 forgotten", st)
	}
	fresh := e.mustPost(e.replicas[0].url, c)
	if fresh.status != http.StatusCreated || fresh.id(t) == first.id(t) {
		t.Fatalf("after the dedupe window: %s, want a new charge", fresh)
	}
}

// A key past its dedupe window that the sweeper has not deleted yet is
// reclaimed atomically by the next request.
func TestServer_ForgottenKeyReclaimedBeforeSweep(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, envOptions{clock: clock, config: func(c *reference.Config) {
		c.TTL = time.Hour
		c.TombstoneTTL = 2 * time.Hour
	}})
	c := charge{tenant: uniq("sk"), key: uniq("key"), body: chargeBody(uniq("ord"), 10)}
	first := e.mustPost(e.replicas[0].url, c)
	clock.Advance(90 * time.Minute) // past the TTL, not swept: full record still replays
	if r := e.mustPost(e.replicas[0].url, c); !bytes.Equal(r.body, first.body) {
		t.Fatalf("inside the tombstone window: %s", r)
	}
	clock.Advance(time.Hour)
	c.body = chargeBody(uniq("ord"), 20) // the key is free again, for any body
	r := e.mustPost(e.replicas[0].url, c)
	if r.status != http.StatusCreated || r.id(t) == first.id(t) || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("reclaimed key: %s", r)
	}
}

// The sweeper resolves keys whose owner crashed, with no client retry:
// one whose charge the gateway committed before the crash (the sweeper
// must adopt that charge, not make a second), and one the owner never sent
// (the sweeper sends it, once).
func TestSweeper_ResolvesCrashedKeys(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, envOptions{replicas: 2, clock: clock, config: func(c *reference.Config) {
		c.Lease = 30 * time.Second
		c.RecoveryAfter = time.Minute
	}})
	ctx := context.Background()
	store := e.replicas[0].srv.Store()
	gw := reference.NewGateway(e.gw.URL, "sk_test_reference", 10*time.Second)
	tenant := uniq("sk")

	crashed := func(order string, sent bool) (key string, chargeID string) {
		key = uniq("key")
		body := chargeBody(order, 1500)
		canonical, _ := reference.Canonicalize([]byte(body))
		params, err := reference.ParseChargeBody(canonical)
		if err != nil {
			t.Fatal(err)
		}
		claim := reference.Claim{Tenant: reference.TenantID(tenant), KeyHash: reference.KeyHash(key), Key: key,
			Fingerprint: reference.Fingerprint("POST", "/v1/charges", canonical), RequestID: "req_" + key,
			Params: params, Owner: "replica_that_crashed", Now: clock.Now(), Lease: 30 * time.Second,
			TTL: 24 * time.Hour, Forget: 30 * 24 * time.Hour}
		if ok, _, err := store.Claim(ctx, claim); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if sent { // the owner reached the gateway, then died before storing the answer
			out := gw.Charge(ctx, reference.GatewayRequest{RequestID: claim.RequestID, ChargeParams: params})
			if out.Kind != reference.Charged {
				t.Fatalf("direct gateway charge: %+v", out)
			}
			chargeID = out.Charge.ID
		}
		return key, chargeID
	}
	orderA, orderB := uniq("ord"), uniq("ord")
	keyA, chargeA := crashed(orderA, true)
	keyB, _ := crashed(orderB, false)

	clock.Advance(45 * time.Second) // lease expired, but younger than RecoveryAfter
	if st := sweep(t, e.replicas[0].srv); st.Recovered != 0 {
		t.Fatalf("recovered too early: %+v", st)
	}
	clock.Advance(time.Minute)
	st1, st2 := sweep(t, e.replicas[0].srv), sweep(t, e.replicas[1].srv)
	if st1.Recovered+st2.Recovered != 2 || st1.Charged+st2.Charged != 2 {
		t.Fatalf("sweeps: %+v %+v, want 2 recovered and charged in all", st1, st2)
	}
	for key, order := range map[string]string{keyA: orderA, keyB: orderB} {
		if state, _, _, _ := e.row(tenant, key); state != reference.StateSucceeded {
			t.Errorf("%s: state %q", key, state)
		}
		if n := len(e.chargesFor(order)); n != 1 {
			t.Errorf("order %s: %d charges, want 1", order, n)
		}
	}
	r := e.mustPost(e.replicas[1].url, charge{tenant: tenant, key: keyA, body: chargeBody(orderA, 1500)})
	if r.status != http.StatusCreated || r.id(t) != chargeA || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry after recovery: %s, want replay of %s", r, chargeA)
	}
}

func sweep(t *testing.T, srv *reference.Server) reference.SweepStats {
	t.Helper()
	st, err := srv.SweepOnce(context.Background())
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	return st
}

// A claim older than the gateway's own idempotency window is recovered by
// searching the gateway (order id, then the request id in the charge's
// metadata) before anything is re-sent: the gateway has forgotten the key,
// so a blind re-send would charge a second time. Through either gateway
// API: PaymentIntents are searched as charges are.
func TestSweeper_RecoveryPastGatewayKeyWindow(t *testing.T) {
	for _, api := range reference.GatewayAPIs {
		t.Run(string(api), func(t *testing.T) { recoverPastGatewayKeyWindow(t, api) })
	}
}

func recoverPastGatewayKeyWindow(t *testing.T, api reference.GatewayAPI) {
	clock := newFakeClock() // also the simulator's clock: its 24h key TTL passes too
	e := newEnv(t, envOptions{clock: clock, config: withAPI(api)})
	ctx := context.Background()
	store := e.replicas[0].srv.Store()
	gw := reference.NewGateway(e.gw.URL, "sk_test_reference", 10*time.Second)
	gw.API = api
	tenant := uniq("sk")
	claim := func(order string) reference.Claim {
		key := uniq("key")
		canonical, _ := reference.Canonicalize([]byte(chargeBody(order, 990)))
		params, _ := reference.ParseChargeBody(canonical)
		c := reference.Claim{Tenant: reference.TenantID(tenant), KeyHash: reference.KeyHash(key), Key: key,
			Fingerprint: reference.Fingerprint("POST", "/v1/charges", canonical), RequestID: "req_" + key,
			Params: params, Owner: "replica_that_crashed", Now: clock.Now(), Lease: 30 * time.Second,
			TTL: 72 * time.Hour, Forget: 30 * 24 * time.Hour}
		if ok, _, err := store.Claim(ctx, c); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		return c
	}
	orderA, orderB := uniq("ord"), uniq("ord")
	a := claim(orderA)
	out := gw.Charge(ctx, reference.GatewayRequest{RequestID: a.RequestID, ChargeParams: a.Params})
	if out.Kind != reference.Charged {
		t.Fatalf("direct charge: %+v", out)
	}
	claim(orderB) // never reached the gateway

	clock.Advance(25 * time.Hour)
	if st := sweep(t, e.replicas[0].srv); st.Charged != 2 {
		t.Fatalf("sweep: %+v, want 2 charged", st)
	}
	if l := e.chargesFor(orderA); len(l) != 1 || l[0].ID != out.Charge.ID {
		t.Fatalf("order A: %+v, want only %s", l, out.Charge.ID)
	}
	if l := e.chargesFor(orderB); len(l) != 1 {
		t.Fatalf("order B: %d charges, want 1", len(l))
	}
}
