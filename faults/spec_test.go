package faults_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/crashwave"
	"github.com/idemcheck/idemcheck/faults"
	gatewaysim "github.com/idemcheck/idemcheck/gateway-sim"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

func TestParse_BuildsEveryKind(t *testing.T) {
	cases := []struct {
		spec string
		want faults.Fault
	}{
		{"latency:replica0->gateway:downstream:latency=200ms", &faults.Latency{Link: "replica0->gateway", Direction: harness.Downstream, Latency: 200 * time.Millisecond}},
		{"latency:client->replica1:both:jitter=5ms,latency=1s,toxicity=0.5", &faults.Latency{Link: "client->replica1", Direction: faults.Both, Latency: time.Second, Jitter: 5 * time.Millisecond, Toxicity: 0.5}},
		{"timeout:replica1->postgres:upstream", &faults.Timeout{Link: "replica1->postgres", Direction: harness.Upstream}},
		{"reset_peer:client->replica0:timeout=10ms", &faults.ResetPeer{Link: "client->replica0", Timeout: 10 * time.Millisecond}},
		{"slicer:client->replica0:average_size=64,delay=1ms,size_variation=8", &faults.Slicer{Link: "client->replica0", AverageSize: 64, SizeVariation: 8, Delay: time.Millisecond}},
		{"limit_data:replica0->gateway:bytes=100", &faults.LimitData{Link: "replica0->gateway", Bytes: 100}},
		{"bandwidth:replica0->postgres:rate=5", &faults.Bandwidth{Link: "replica0->postgres", Rate: 5}},
		{"down:replica0->postgres", &faults.Down{Link: "replica0->postgres"}},
		{"kill:replica1", &faults.Kill{Replica: 1}},
		{"pause:replica0", &faults.Pause{Replica: 0}},
		{"restart:replica12", &faults.Restart{Replica: 12}},
		{"kill_in_hang:replica0:order=ord_1", &faults.CrashInHang{Replica: 0, OrderID: "ord_1"}},
		{"decline:gateway:order=ord_1", faults.Decline(gatewaysim.Match{OrderID: "ord_1"})},
		{"charge_then_hang:gateway:nth=3,times=1", &faults.Gateway{Kind: gatewaysim.ChargeThenHang, Match: gatewaysim.Match{Nth: 3}, Times: 1}},
		{"fail_before_charge:gateway:probability=0.25", faults.FailBeforeCharge(gatewaysim.Match{Probability: 0.25})},
		{"slow:gateway:latency=2s", faults.Slow(gatewaysim.Match{}, 2*time.Second)},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := faults.Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tc.want) {
				t.Errorf("Parse = %+v, want %+v", got, tc.want)
			}
			sp, _ := faults.ParseSpec(tc.spec)
			if sp.String() != tc.spec {
				t.Errorf("String() = %q, want the canonical %q", sp.String(), tc.spec)
			}
		})
	}
}

func TestParse_ErrorsNameTheField(t *testing.T) {
	cases := []struct{ spec, field, msg string }{
		{"latency", "kind", "want kind:target"},
		{"lag:client->replica0", "kind", "unknown kind"},
		{"latency:client->gateway:latency=1s", "target", "want a link"},
		{"latency:client->replica0", "latency", "required"},
		{"latency:client->replica0:latency=fast", "latency", "want a duration"},
		{"latency:client->replica0:sideways:latency=1s", "direction", "want upstream, downstream or both"},
		{"latency:client->replica0:latency=1s,rate=3", "rate", "unknown param"},
		{"latency:client->replica0:latency=1s,toxicity=2", "toxicity", "in [0, 1]"},
		{"down:client->replica0:upstream", "direction", "takes no direction"},
		{"kill:replica", "target", "want a replica"},
		{"kill:replica0:order=x", "order", "takes no params"},
		{"kill_in_hang:replica0", "order", "required"},
		{"decline:replica0", "target", "want gateway"},
		{"slow:gateway", "latency", "required"},
		{"bandwidth:client->replica0:rate=-1", "rate", "non-negative integer"},
		{"limit_data:client->replica0:bytes=1,bytes=2", "bytes", "given twice"},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			_, err := faults.Parse(tc.spec)
			var se *faults.SpecError
			if !errors.As(err, &se) || !errors.Is(err, faults.ErrBadSpec) {
				t.Fatalf("Parse = %v, want a *SpecError", err)
			}
			if se.Field != tc.field || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error %q: field %q, want %q with %q", err, se.Field, tc.field, tc.msg)
			}
		})
	}
}

func TestSpec_StructFormBuilds(t *testing.T) {
	sp := faults.Spec{Kind: "reset_peer", Target: "replica1->gateway", Direction: "upstream", Params: map[string]string{"timeout": "50ms"}}
	f, err := sp.Build()
	if err != nil {
		t.Fatal(err)
	}
	rp, ok := f.(*faults.ResetPeer)
	if !ok || rp.Link != harness.GatewayLink(1) || rp.Direction != harness.Upstream || rp.Timeout != 50*time.Millisecond {
		t.Errorf("Build = %+v", f)
	}
	if f.Name() != "reset_peer" || f.Target() != "replica1->gateway" {
		t.Errorf("Name/Target = %s/%s", f.Name(), f.Target())
	}
}

func ExampleParse() {
	f, err := faults.Parse("latency:replica0->gateway:downstream:latency=200ms")
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Name(), f.Target(), f.(faults.Parametrized).Params())
	_, err = faults.Parse("latency:replica0->gateway:latency=soon")
	fmt.Println(err)
	// Output:
	// latency replica0->gateway map[direction:downstream jitter:0s latency:200ms]
	// fault "latency:replica0->gateway:latency=soon": latency: want a duration such as 200ms or 1.5s, got "soon"
}

// TestClass_AsOldHistoriesWereJudged: every kind that histories recorded
// before history.Fault.Class existed declares the class such a history is
// still judged by (history.Fault.ClassOf of its name), so a run recorded
// today is judged as one recorded then. A kind added since has no class by
// name and needs no row here.
func TestClass_AsOldHistoriesWereJudged(t *testing.T) {
	for _, spec := range []string{
		"latency:client->replica0:latency=1ms", "bandwidth:client->replica0:rate=1", "slicer:client->replica0:average_size=1",
		"timeout:client->replica0", "reset_peer:client->replica0", "limit_data:client->replica0:bytes=1", "down:client->replica0",
		"kill:replica0", "restart:replica0", "pause:replica0", "kill_in_hang:replica0:order=o",
		"decline:gateway", "fail_before_charge:gateway", "charge_then_fail:gateway", "charge_then_drop:gateway",
		"charge_then_hang:gateway", "slow:gateway:latency=1ms",
	} {
		f, err := faults.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if old := (history.Fault{Name: f.Name()}).ClassOf(); f.Class() != old {
			t.Errorf("%s (recorded %s) declares %s, old histories read it as %s", spec, f.Name(), f.Class(), old)
		}
	}
}

// TestGateway_NameAndClassFromItsKindsFile: a gateway rule is named and
// classed by the file that registered its kind.
func TestGateway_NameAndClassFromItsKindsFile(t *testing.T) {
	cases := []struct {
		f     *faults.Gateway
		name  string
		class history.Class
	}{
		{faults.Slow(gatewaysim.Match{}, time.Second), "gateway:slow", history.Slows},
		{faults.ChargeThenHang(gatewaysim.Match{}), "gateway:charge_then_hang", history.Crash},
		{faults.Decline(gatewaysim.Match{}), "gateway:decline", history.Business},
		{faults.FailBeforeCharge(gatewaysim.Match{}), "gateway:fail_before_charge", history.Disturbs},
	}
	for _, tc := range cases {
		if tc.f.Name() != tc.name || tc.f.Class() != tc.class {
			t.Errorf("%s %s, want %s %s", tc.f.Name(), tc.f.Class(), tc.name, tc.class)
		}
	}
}

// TestCrashWave_KindsAreFaultKinds: every crash point strikes with a
// registered fault kind (a gateway kind as "gateway:<kind>").
func TestCrashWave_KindsAreFaultKinds(t *testing.T) {
	for _, row := range crashwave.Table {
		kind, gateway := strings.CutPrefix(row.Kind, "gateway:")
		if target := faults.TargetOf(kind); target == "" || gateway != (target == "gateway") {
			t.Errorf("crash point %s: kind %q is no fault kind (target %q)", row.Name, row.Kind, target)
		}
	}
}
