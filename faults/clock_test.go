package faults_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/target"
)

// pythonEnv starts Python's http.server as the replica: a dynamically
// linked server that reads the time through libc, as libfaketime needs.
func pythonEnv(t *testing.T) *testEnv {
	t.Helper()
	if harness.HostLibFakeTime() == "" {
		t.Skip("libfaketime is not installed (apt-get install faketime)")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	tg := &target.Target{Name: "python-http", Start: target.Start{Command: py, Args: []string{"-m", "http.server", "--bind", "127.0.0.1", "{{.Port}}"}, Dir: t.TempDir()},
		Ready: target.Ready{Path: "/", Timeout: 20 * time.Second}, Policy: target.Policy{TTL: time.Hour}}
	proc := harnesstest.Start(t, tg, harness.Options{Replicas: 1})
	rec := history.NewRecorder(history.History{Target: tg.Name})
	return &testEnv{Env: faults.Bind(proc, rec, nil), rec: rec, proc: proc}
}

func TestClockSkew_MovesALibcServersClockAndHealRestoresIt(t *testing.T) {
	env := pythonEnv(t)
	url := env.ReplicaURL(0) + "/"
	if off := harnesstest.DateOffset(t, url); off < -time.Second || off > time.Second {
		t.Fatalf("baseline Date offset %s", off)
	}
	pid := env.proc.PID(0)
	heal := apply(t, env, &faults.ClockSkew{Replica: 0, Offset: -7 * time.Second})
	if env.proc.PID(0) == pid {
		t.Fatal("the replica was not relaunched")
	}
	if off := harnesstest.DateOffset(t, url); off < -8*time.Second || off > -6*time.Second {
		t.Errorf("Date offset while skewed %s, want about -7s", off)
	}
	f := recorded(env, "clock_skew")
	if len(f) != 1 || f[0].Class != history.Skews || f[0].Params["offset"] != "-7s" || f[0].Skew < 6*time.Second || f[0].Skew > 8*time.Second {
		t.Fatalf("history = %+v, want the offset and a measured skew bound of about 7s", f)
	}
	// The relaunch is the disruption: a crash-class fault of its own,
	// healed before the skew was recorded as in force.
	if r := recorded(env, faults.RelaunchName); len(r) != 1 || r[0].Class != history.Crash || !r[0].Healed || r[0].Heal > f[0].Inject || r[0].Target != "replica0" {
		t.Fatalf("relaunches = %+v, want one crash-class relaunch of replica0 healed by %s", r, f[0].Inject)
	}
	if !strings.HasPrefix(f[0].Params["measured"], "-") {
		t.Errorf("measured %q, want a negative offset", f[0].Params["measured"])
	}
	mustHeal(t, heal)
	if off := harnesstest.DateOffset(t, url); off < -time.Second || off > time.Second {
		t.Errorf("Date offset after heal %s, want about 0", off)
	}
	if r := recorded(env, faults.RelaunchName); len(r) != 2 || !r[1].Healed {
		t.Errorf("relaunches = %+v, want the heal's relaunch recorded too", r)
	}
}

// A Go server reads the time through the vDSO: libfaketime does not reach
// it, and the measurement says so instead of recording the offset asked.
func TestClockSkew_DoesNotReachAGoServerThatIgnoresFAKETIME(t *testing.T) {
	env := newEnv(t, false)
	heal := apply(t, env, &faults.ClockSkew{Replica: 0, Offset: 9 * time.Second})
	defer mustHeal(t, heal)
	if off := harnesstest.DateOffset(t, env.ReplicaURL(0)+"/healthz"); off < -time.Second || off > time.Second {
		t.Errorf("Date offset %s: the test server is a Go binary and should not be reached", off)
	}
	if f := recorded(env, "clock_skew"); len(f) != 1 || f[0].Skew > 2*time.Second {
		t.Errorf("history = %+v, want the small skew measured, not the 9s asked", f)
	}
}

func TestDBTimeZone_SessionsThroughTheURLRunInTheZone(t *testing.T) {
	env := newEnv(t, true)
	probe := func() (tz, url string) {
		t.Helper()
		r := get(env.ReplicaURL(0)+"/probe/timezone", 10*time.Second)
		mustOK(t, "probe", r)
		var out struct{ Timezone, URL string }
		if err := json.Unmarshal([]byte(r.body), &out); err != nil {
			t.Fatal(err)
		}
		return out.Timezone, out.URL
	}
	before, _ := probe()
	heal := apply(t, env, &faults.DBTimeZone{Replica: 0, Zone: "Asia/Kolkata"})
	tz, url := probe()
	if tz != "Asia/Kolkata" {
		t.Errorf("SHOW TimeZone through pgx = %q, want Asia/Kolkata", tz)
	}
	if psql, err := exec.LookPath("/usr/lib/postgresql/15/bin/psql"); err == nil {
		out, err := exec.Command(psql, "-XAtc", "SHOW TimeZone", url).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "Asia/Kolkata" {
			t.Errorf("SHOW TimeZone through libpq = %q, %v, want Asia/Kolkata", out, err)
		}
	}
	f := recorded(env, "db_timezone")
	if len(f) != 1 || f[0].Params["zone"] != "Asia/Kolkata" || f[0].Params["utc_offset"] != "+05:30" {
		t.Errorf("history = %+v", f)
	}
	mustHeal(t, heal)
	if tz, _ := probe(); tz != before {
		t.Errorf("SHOW TimeZone after heal = %q, want %q as before", tz, before)
	}
}

func TestDBTimeZone_RefusesUTCAndUnknownZones(t *testing.T) {
	for _, z := range []string{"UTC", "Mars/Olympus", ""} {
		_, err := faults.Parse("db_timezone:replica0:zone=" + z)
		if err == nil || !strings.Contains(err.Error(), "zone") {
			t.Errorf("zone %q: err = %v, want a zone error", z, err)
		}
	}
	if _, err := faults.Parse("clock_skew:replica0:offset=soon"); err == nil || !strings.Contains(err.Error(), "offset") {
		t.Errorf("offset=soon: err = %v", err)
	}
	f, err := faults.Parse("clock_skew:replica1:offset=-2s")
	if err != nil || f.(*faults.ClockSkew).Offset != -2*time.Second || f.Target() != "replica1" {
		t.Errorf("clock_skew:replica1:offset=-2s = %+v, %v", f, err)
	}
}
