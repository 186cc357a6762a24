package process_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/history"
)

// evidence is the guard's evidence, bounded.
func evidence(t *testing.T, g *harness.Guard) ([]history.Touch, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	touches, proofs, _ := g.Evidence(ctx)
	return touches, proofs
}

// Faults set and removed through the guard, by several examples at once,
// are never a touch: each proof sees the harness exactly as idemcheck
// left it (a proof that an operation overlapped is discarded).
func TestGuard_OwnFaultsAreNoTouch(t *testing.T) {
	env := harnesstest.Start(t, harnesstest.Target(t, false, nil), harness.Options{})
	g := harness.NewGuard(env)
	defer g.Stop()
	var wg sync.WaitGroup
	for i := range env.Replicas() {
		wg.Go(func() {
			for n := range 5 {
				l := harness.GatewayLink(i)
				if err := g.AddToxic(l, harness.Toxic{Name: "slow", Type: "latency", Direction: harness.Downstream, Attributes: map[string]any{"latency": 1}}); err != nil {
					t.Error(err)
					return
				}
				id, err := g.GatewayController().AddFault(gatewaysim.Fault{Kind: gatewaysim.Decline, Match: gatewaysim.Match{OrderID: "ord_" + string(rune('a'+n))}, Times: 1})
				if err != nil {
					t.Error(err)
					return
				}
				if err := g.SetLinkEnabled(harness.ClientLink(i), false); err != nil {
					t.Error(err)
				}
				if err := g.SetLinkEnabled(harness.ClientLink(i), true); err != nil {
					t.Error(err)
				}
				if err := g.GatewayController().RemoveFault(id); err != nil {
					t.Error(err)
				}
				if err := g.RemoveToxic(context.Background(), l, "slow"); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	touches, proofs := evidence(t, g)
	if len(touches) != 0 || proofs < 1 {
		t.Fatalf("touches %+v after %d proofs, want none after at least the last one", touches, proofs)
	}
	t.Logf("%d proofs for %d operations", proofs, 6*5*env.Replicas())
}

// Whatever changes the toxics, the links or the gateway's rules behind
// the guard's back is found at the next inject or heal, and a request
// for a control API on a replica's gateway link is found as it arrives,
// naming the replica.
func TestGuard_FindsWhatChangedBehindItsBack(t *testing.T) {
	env := harnesstest.Start(t, harnesstest.Target(t, false, nil), harness.Options{Replicas: 1})
	g := harness.NewGuard(env)
	defer g.Stop()
	l := harness.GatewayLink(0)
	if _, err := g.GatewayController().AddFault(gatewaysim.Fault{Kind: gatewaysim.ChargeThenHang, Match: gatewaysim.Match{OrderID: "ord_x"}, Times: 1}); err != nil {
		t.Fatal(err)
	}
	// Behind its back: a toxic, the rule cleared, a link taken down.
	if err := env.AddToxic(l, harness.Toxic{Name: "intruder", Type: "latency", Direction: harness.Downstream, Attributes: map[string]any{"latency": 1}}); err != nil {
		t.Fatal(err)
	}
	env.Gateway().ClearFaults()
	if err := env.SetLinkEnabled(harness.ClientLink(0), false); err != nil {
		t.Fatal(err)
	}
	// And as a server would: the control API on its GATEWAY_URL.
	resp, err := http.Post("http://"+env.LinkAddr(l)+"/_sim/reset", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "Unrecognized request URL") {
		t.Fatalf("POST {GATEWAY_URL}/_sim/reset: %d %s, want Stripe's 404", resp.StatusCode, body)
	}
	if err := g.Kill(0); err != nil { // an inject: a proof follows
		t.Fatal(err)
	}
	touches, _ := evidence(t, g)
	var got []string
	for _, tc := range touches {
		got = append(got, tc.What+" | "+tc.By+" | "+tc.Found)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"toxic intruder on link replica0->gateway, which idemcheck did not put there | replica0->gateway | at ",
		"gateway rule flt_1 (charge_then_hang), which idemcheck armed, is gone",
		"link client->replica0 is down; idemcheck left it up",
		"POST /_sim/reset on the provider's address (answered with the provider's 404) | replica0 | as it arrived at the gateway (by replica0->gateway)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("touches do not say %q:\n%s", want, all)
		}
	}
}
