package faults_test

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/harness"
)

// Timing thresholds. A faulted request must take at least delay (a hard
// bound: toxiproxy cannot be faster). A healthy loopback round trip through
// toxiproxy takes milliseconds, but under -race on two shared cores it has
// been seen near 200ms, so "fast again" is only required to beat fast.
const (
	fast  = 400 * time.Millisecond
	delay = 500 * time.Millisecond
)

func TestLatency_DelaysResponsesAndHealRestores(t *testing.T) {
	env := newEnv(t, false)
	url := env.ReplicaURL(0) + "/healthz"
	if r := get(url, 5*time.Second); r.err != nil || r.elapsed >= fast {
		t.Fatalf("baseline: %v in %s", r.err, r.elapsed)
	}
	heal := apply(t, env, &faults.Latency{Link: harness.ClientLink(0), Direction: harness.Downstream, Latency: delay})
	r := get(url, 5*time.Second)
	mustOK(t, "with latency", r)
	if r.elapsed < delay {
		t.Errorf("round trip with %s downstream latency took %s", delay, r.elapsed)
	}
	mustHeal(t, heal)
	if r := get(url, 5*time.Second); r.err != nil || r.elapsed >= fast {
		t.Errorf("after heal: %v in %s", r.err, r.elapsed)
	}
	f := recorded(env, "latency")
	if len(f) != 1 || !f[0].Healed || f[0].Target != "client->replica0" || f[0].Params["latency"] != delay.String() || f[0].Params["direction"] != "downstream" {
		t.Errorf("history = %+v", f)
	}
}

func TestLatency_BothDirectionsOnTheGatewayLink(t *testing.T) {
	env := newEnv(t, false)
	heal := apply(t, env, &faults.Latency{Link: harness.GatewayLink(0), Direction: faults.Both, Latency: delay})
	r := get(env.ReplicaURL(0)+"/probe/gateway", 5*time.Second)
	mustOK(t, "probe", r)
	if r.elapsed < 2*delay {
		t.Errorf("gateway call with %s each way took %s", delay, r.elapsed)
	}
	mustHeal(t, heal)
	if r := get(env.ReplicaURL(0)+"/probe/gateway", 5*time.Second); r.err != nil || r.elapsed >= fast {
		t.Errorf("after heal: %v in %s", r.err, r.elapsed)
	}
}

func TestLatency_OnThePostgresLink(t *testing.T) {
	env := newEnv(t, true)
	heal := apply(t, env, &faults.Latency{Link: harness.PostgresLink(0), Latency: delay})
	r := get(env.ReplicaURL(0)+"/probe/db", 10*time.Second)
	mustOK(t, "db probe", r)
	if r.elapsed < delay {
		t.Errorf("database round trips with %s latency took %s", delay, r.elapsed)
	}
	mustHeal(t, heal)
}

func TestTimeout_BlackHolesUntilHealed(t *testing.T) {
	env := newEnv(t, false)
	url := env.ReplicaURL(0) + "/healthz"
	heal := apply(t, env, &faults.Timeout{Link: harness.ClientLink(0), Direction: harness.Upstream})
	r := get(url, 300*time.Millisecond)
	var ne net.Error
	if !errors.As(r.err, &ne) || !ne.Timeout() {
		t.Fatalf("request into a black hole = %d %v, want a client timeout", r.status, r.err)
	}
	mustHeal(t, heal)
	mustOK(t, "after heal", get(url, 5*time.Second))
}

func TestTimeout_ClosesTheConnectionAfterTheTimeout(t *testing.T) {
	env := newEnv(t, false)
	heal := apply(t, env, &faults.Timeout{Link: harness.ClientLink(0), Direction: harness.Upstream, Timeout: 100 * time.Millisecond})
	defer mustHeal(t, heal)
	r := get(env.ReplicaURL(0)+"/healthz", 5*time.Second)
	if r.err == nil || r.elapsed < 100*time.Millisecond || r.elapsed > 3*time.Second {
		t.Fatalf("request = %d %v after %s, want the connection closed after ~100ms", r.status, r.err, r.elapsed)
	}
}

func TestResetPeer_ResetsAndHealRestores(t *testing.T) {
	env := newEnv(t, false)
	url := env.ReplicaURL(0) + "/healthz"
	heal := apply(t, env, &faults.ResetPeer{Link: harness.ClientLink(0), Direction: harness.Downstream})
	r := get(url, 5*time.Second)
	if !errors.Is(r.err, syscall.ECONNRESET) {
		t.Fatalf("request = %d %v, want connection reset by peer", r.status, r.err)
	}
	mustHeal(t, heal)
	mustOK(t, "after heal", get(url, 5*time.Second))
}

func TestDown_RefusesUntilHealed(t *testing.T) {
	env := newEnv(t, true)
	heal := apply(t, env, &faults.Down{Link: harness.GatewayLink(0)})
	r := get(env.ReplicaURL(0)+"/probe/gateway", 5*time.Second)
	if r.status != 502 || !strings.Contains(r.body, "connection refused") {
		t.Fatalf("gateway probe over a down link = %d %s %v, want 502 connection refused", r.status, r.body, r.err)
	}
	mustHeal(t, heal)
	mustOK(t, "gateway probe after heal", get(env.ReplicaURL(0)+"/probe/gateway", 5*time.Second))

	heal = apply(t, env, &faults.Down{Link: harness.PostgresLink(0)})
	if r := get(env.ReplicaURL(0)+"/probe/db", 5*time.Second); r.status != 502 {
		t.Fatalf("db probe over a down link = %d %s %v, want 502", r.status, r.body, r.err)
	}
	mustHeal(t, heal)
	mustOK(t, "db probe after heal", get(env.ReplicaURL(0)+"/probe/db", 5*time.Second))
}

func TestSlicer_DeliversIntactButInSlowSlices(t *testing.T) {
	env := newEnv(t, false)
	url := env.ReplicaURL(0) + "/echo?bytes=2000"
	heal := apply(t, env, &faults.Slicer{Link: harness.ClientLink(0), AverageSize: 100, SizeVariation: 10, Delay: 40 * time.Millisecond})
	r := get(url, 10*time.Second)
	mustOK(t, "sliced", r)
	if len(r.body) != 2000 || r.elapsed < 600*time.Millisecond {
		t.Errorf("sliced response: %d bytes in %s, want 2000 bytes in >= 20 slices 40ms apart", len(r.body), r.elapsed)
	}
	mustHeal(t, heal)
	if r := get(url, 5*time.Second); r.err != nil || r.elapsed >= fast {
		t.Errorf("after heal: %v in %s", r.err, r.elapsed)
	}
}

func TestLimitData_CutsTheResponseShort(t *testing.T) {
	env := newEnv(t, false)
	url := env.ReplicaURL(0) + "/echo?bytes=10000"
	heal := apply(t, env, &faults.LimitData{Link: harness.ClientLink(0), Bytes: 500})
	if r := get(url, 5*time.Second); r.err == nil || len(r.body) >= 10000 {
		t.Fatalf("limited response: %d bytes, err %v; want cut short", len(r.body), r.err)
	}
	mustHeal(t, heal)
	if r := get(url, 5*time.Second); r.err != nil || len(r.body) != 10000 {
		t.Errorf("after heal: %d bytes, %v", len(r.body), r.err)
	}
}

func TestBandwidth_ThrottlesLargeBodies(t *testing.T) {
	env := newEnv(t, false)
	url := env.ReplicaURL(0) + "/echo?bytes=10240"
	heal := apply(t, env, &faults.Bandwidth{Link: harness.ClientLink(0), Rate: 10})
	r := get(url, 10*time.Second)
	mustOK(t, "throttled", r)
	if len(r.body) != 10240 || r.elapsed < 700*time.Millisecond {
		t.Errorf("10 KB at 10 KB/s: %d bytes in %s, want ~1s", len(r.body), r.elapsed)
	}
	mustHeal(t, heal)
	if r := get(url, 5*time.Second); r.err != nil || r.elapsed >= fast {
		t.Errorf("after heal: %v in %s", r.err, r.elapsed)
	}
}

func TestApply_FailedInjectionRecordsNothing(t *testing.T) {
	env := newEnv(t, false)
	_, err := faults.Apply(t.Context(), env, &faults.Latency{Link: harness.ClientLink(5), Latency: delay})
	if !errors.Is(err, harness.ErrUnknownLink) || !strings.HasPrefix(err.Error(), "inject latency on client->replica5") {
		t.Errorf("Apply on a missing link = %v", err)
	}
	_, err = faults.Apply(t.Context(), env, &faults.Latency{Link: harness.ClientLink(0), Latency: 500 * time.Microsecond})
	if err == nil {
		t.Error("Apply accepted a sub-millisecond latency toxiproxy cannot express")
	}
	_, err = faults.Apply(t.Context(), env, &faults.Latency{Link: harness.ClientLink(0), Direction: "sideways", Latency: delay})
	if err == nil {
		t.Error("Apply accepted direction sideways")
	}
	if got := env.rec.Snapshot(false).Faults; len(got) != 0 {
		t.Errorf("failed injections were recorded: %+v", got)
	}
}
