package scenarios_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/scenarios"
)

func TestIncidents_TableLoads(t *testing.T) {
	incs, err := scenarios.Incidents()
	if err != nil {
		t.Fatal(err)
	}
	if len(incs) < 6 {
		t.Fatalf("regression table has %d incidents, want at least 6", len(incs))
	}
	public := 0
	for _, in := range incs {
		if in.Public {
			public++
			if in.Scenario.Source == "" || !strings.HasPrefix(in.File, "public/") {
				t.Errorf("%s: a public incident lives under public/ and cites its source", in.File)
			}
		}
		if in.Scenario.Target == "" || len(in.Scenario.Expect) == 0 {
			t.Errorf("%s: an incident names the target that exhibits it and its expected verdicts", in.File)
		}
	}
	if public == 0 {
		t.Error("the table holds no public incident")
	}
}

// TestIncident_MemberNamesFileLine: an own incident file (no source)
// loads with any target name, since a counterexample names the user's
// server; resolving it as a member refuses an unknown one at its line.
func TestIncident_MemberNamesFileLine(t *testing.T) {
	sc, err := scenarios.ParseIncident("x.yaml", []byte("name: x\ntarget: payments\nsteps:\n  - send: {key: k, order: o}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Member(); err == nil || !errors.Is(err, scenarios.ErrInvalid) || !strings.HasPrefix(err.Error(), "x.yaml:2: target: expected a built-in member") {
		t.Fatalf("got %v", err)
	}
}

func TestIncidents_BadFilesNameFileLineField(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"name: x\nsteps:\n  - send: {key: k1}\n", "bad.yaml:3: steps[0].send.order: expected a symbolic order"},
		{"name: x\nsteps:\n  - send: {key: k1, order: o, retry_within: -1}\n", "bad.yaml:3: steps[0].send.retry_within: expected a positive number of TTLs"},
		{"name: x\nsteps:\n  - send: {key: k1, order: o, retry_within: 2, converge: true}\n", "bad.yaml:3: steps[0].send.retry_within: expected either converge or retry_within"},
		{"name: x\nsteps:\n  - fault: {id: f, kind: earthquake}\n", "bad.yaml:3: steps[0].fault.kind: expected one of"},
		{"name: x\nsteps:\n  - fault: {id: f, kind: latency, link: client->replica0, params: {latency: fast}}\n", "bad.yaml:3: steps[0].fault.params.latency: want a duration"},
		{"name: x\nsteps:\n  - fault: {id: f, kind: latency, link: client->replica0}\n", "bad.yaml:3: steps[0].fault.params.latency: required for latency"},
		{"name: x\nsteps:\n  - fault: {id: f, kind: latency, link: client->replica0, params: {latency: 5ms, jiter: 1ms}}\n", "bad.yaml:3: steps[0].fault.params.jiter: unknown param for latency"},
		{"name: x\nsteps:\n  - fault: {id: f, kind: reset_peer, link: client->replica0, direction: sideways}\n", "bad.yaml:3: steps[0].fault.direction: want upstream, downstream or both"},
		{"name: x\nsteps:\n  - fault: {id: f, kind: down, link: replica0->moon}\n", "bad.yaml:3: steps[0].fault.link: want a link"},
		{"name: x\nsteps:\n  - fault: {id: f, kind: gateway:slow, order: o}\n", "bad.yaml:3: steps[0].fault.params.latency: required for slow"},
		{"name: x\nsteps:\n  - fault: {id: f, kind: kill_in_hang, replica: 0}\n", "bad.yaml:3: steps[0].fault.order: required for kill_in_hang"},
		{"name: x\nsteps:\n  - fault: {id: f, kind: kill_in_hang, replica: 0, params: {order: o}}\n", "bad.yaml:3: steps[0].fault.params.order: name the order with the fault's order field"},
		{"name: x\nsteps:\n  - fault: {id: f, kind: down, link: client->replica0, order: o}\n", "bad.yaml:3: steps[0].fault.order: only gateway:<kind> and kill_in_hang faults are aimed at an order"},
		{"name: x\nsteps:\n  - heal: nope\n", "bad.yaml:3: steps[0].heal: expected the id of an earlier fault"},
		{"name: x\nsteps:\n  - wait: {for: soon}\n", "bad.yaml:3: steps[0].wait.for: expected a duration"},
		{"name: x\nsteps:\n  - send: {key: k, order: o}\n    wait: {for: 1s}\n", "bad.yaml:3: steps[0]: expected exactly one of"},
		{"name: x\nsteps:\n  - send: {id: a, key: k, order: o}\n  - wait: {ttl: 2, from: b}\n", "bad.yaml:4: steps[1].wait.from: expected the id of an earlier send, got \"b\""},
		{"name: x\nsteps:\n  - send: {id: a, key: k, order: o}\n  - wait: {for: 1s, from: a}\n", "bad.yaml:4: steps[1].wait.from: only a ttl wait counts from a send's answer"},
		{"name: x\nsteps:\n  - send: {key: k, order: o}\nexpect:\n  - {check: M9, verdict: FAILED}\n", "bad.yaml:5: expect[0].check: expected one of"},
		{"name: x\nsteps:\n  - sned: {key: k}\n", "bad.yaml:3:"},
	}
	for _, c := range cases {
		_, err := scenarios.ParseIncident("bad.yaml", []byte(c.yaml))
		if err == nil || !errors.Is(err, scenarios.ErrInvalid) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant prefix %q", c.yaml, err, c.want)
		}
	}
}

// TestIncident_KillInHangNamesItsOrder: kill_in_hang is aimed at an
// order with the fault's order field, and that order reaches the fault
// as package faults builds it.
func TestIncident_KillInHangNamesItsOrder(t *testing.T) {
	sc, err := scenarios.ParseIncident("hang.yaml", []byte("name: x\nsteps:\n  - fault: {id: f, kind: kill_in_hang, replica: 0, order: o1}\n  - send: {id: s, key: k, order: o1}\n  - heal: f\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sp := sc.Steps[0].Fault.Spec("ord_x_o1"); sp.String() != "kill_in_hang:replica0:order=ord_x_o1" {
		t.Errorf("spec %s, want kill_in_hang:replica0:order=ord_x_o1", sp)
	}
}

// TestIncidents_PublicFilesCiteAThreadAndAMember: a public incident
// names its thread as owner/repo#N and a built-in member; each mistake is
// refused with file:line and the field.
func TestIncidents_PublicFilesCiteAThreadAndAMember(t *testing.T) {
	const steps = "steps:\n  - send: {key: k, order: o}\n"
	cases := []struct{ name, yaml, want string }{
		{"public/bad.yaml", "name: x\ntarget: naive\n" + steps, "public/bad.yaml: source: expected the public thread as owner/repo#N"},
		{"public/bad.yaml", "name: x\nsource: https://github.com/a/b/issues/1\ntarget: naive\n" + steps, "public/bad.yaml:2: source: expected a GitHub thread as owner/repo#N"},
		{"bad.yaml", "name: x\nsource: a/b#0\ntarget: naive\n" + steps, "bad.yaml:2: source: expected a GitHub thread"},
		{"bad.yaml", "name: x\nsource: a/b\ntarget: naive\n" + steps, "bad.yaml:2: source: expected a GitHub thread"},
		{"bad.yaml", "name: x\nsource: -a/b#1\ntarget: naive\n" + steps, "bad.yaml:2: source: expected a GitHub thread"},
		{"bad.yaml", "name: x\nsource: a/b#1\nalso: [a/b#2, c#3]\ntarget: naive\n" + steps, "bad.yaml:3: also[1]: expected a GitHub thread"},
		{"public/bad.yaml", "name: x\nsource: a/b#1\ntarget: naïve\n" + steps, "public/bad.yaml:3: target: expected a built-in member"},
		{"public/bad.yaml", "name: x\nsource: a/b#1\n" + steps, "public/bad.yaml: target: expected a built-in member"},
		{"public/bad.yaml", "name: x\nsource: a/b#1\ntarget: naive\n" + steps + "expect:\n  - {check: M1, verdict: BROKEN}\n", "public/bad.yaml:7: expect[0].verdict: expected one of"},
		{"public/bad.yaml", "name: x\nsource: a/b#1\ntarget: naive\n" + steps + "expect:\n  - {check: M7, verdict: FAILED}\n", "public/bad.yaml:7: expect[0].check: expected one of"},
	}
	for _, c := range cases {
		_, err := scenarios.ParseIncident(c.name, []byte(c.yaml))
		if err == nil || !errors.Is(err, scenarios.ErrInvalid) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant prefix %q", c.yaml, err, c.want)
		}
	}
}

func TestScenario_MarshalRoundTrip(t *testing.T) {
	incs, err := scenarios.Incidents()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range incs {
		data, err := in.Scenario.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := scenarios.ParseIncident(in.File, data)
		if err != nil {
			t.Fatalf("%s: written incident does not load back: %v\n%s", in.File, err, data)
		}
		if len(back.Steps) != len(in.Scenario.Steps) || back.Steps[1].String() != in.Scenario.Steps[1].String() {
			t.Fatalf("%s: round trip changed the steps", in.File)
		}
	}
}

// A fault may name the target's key store ("replica0->store", store:
// store): it loads, and On aims it at the store the target keeps.
func TestFault_KeyStoreIsTheTargetsStore(t *testing.T) {
	sc, err := scenarios.ParseIncident("ks.yaml", []byte("name: x\nsteps:\n"+
		"  - fault: {id: f, kind: latency, link: \"replica1->store\", params: {latency: 5ms}}\n"+
		"  - fault: {id: g, kind: store_restart, store: store}\n"))
	if err != nil {
		t.Fatal(err)
	}
	f, g := *sc.Steps[0].Fault, *sc.Steps[1].Fault
	if !f.NamesKeyStore() || !g.NamesKeyStore() {
		t.Fatalf("NamesKeyStore: %v, %v, want true", f.NamesKeyStore(), g.NamesKeyStore())
	}
	if got := f.On("redis").Link; got != "replica1->redis" {
		t.Errorf("link on redis: %q, want replica1->redis", got)
	}
	if got := g.On("mysql").Store; got != "mysql" {
		t.Errorf("store on mysql: %q, want mysql", got)
	}
	if f.Link != "replica1->store" {
		t.Errorf("On changed the scenario's fault: %q", f.Link)
	}
	if h := (scenarios.Fault{Link: "replica0->postgres"}); h.NamesKeyStore() || h.On("redis").Link != "replica0->postgres" {
		t.Errorf("a named store is kept: %+v", h.On("redis"))
	}
}
