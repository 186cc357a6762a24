package faults_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/faults"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/history"
)

func TestKill_MakesTheReplicaUnreachableAndHealRestartsIt(t *testing.T) {
	env := newEnv(t, false)
	url, addr, pid := env.ReplicaURL(0)+"/healthz", env.proc.ReplicaAddr(0), env.proc.PID(0)
	heal := apply(t, env, &faults.Kill{Replica: 0})
	if harnesstest.Alive(pid) {
		t.Fatalf("pid %d alive after kill", pid)
	}
	if r := get(url, 2*time.Second); r.err == nil {
		t.Fatalf("killed replica answered %d", r.status)
	}
	if f := recorded(env, "kill"); len(f) != 1 || f[0].Healed || f[0].Target != "replica0" || f[0].Class != history.Crash {
		t.Errorf("history while killed = %+v", f)
	}
	if _, err := faults.Apply(t.Context(), env, &faults.Kill{Replica: 0}); !errors.Is(err, harness.ErrNotRunning) {
		t.Errorf("killing a dead replica = %v, want ErrNotRunning", err)
	}

	mustHeal(t, heal)
	mustOK(t, "after restart", get(url, 5*time.Second))
	if env.proc.ReplicaAddr(0) != addr {
		t.Errorf("restarted on %s, want %s", env.proc.ReplicaAddr(0), addr)
	}
	f := recorded(env, "kill")
	if len(f) != 1 || !f[0].Healed || f[0].Heal < f[0].Inject {
		t.Errorf("history after heal = %+v (a failed kill must not be recorded)", f)
	}
	mustHeal(t, heal) // a second heal is a no-op
}

func TestPause_HangsRequestsAndHealCompletesThem(t *testing.T) {
	env := newEnv(t, false)
	url := env.ReplicaURL(0) + "/healthz"
	heal := apply(t, env, &faults.Pause{Replica: 0})
	r := get(url, 300*time.Millisecond)
	var ne net.Error
	if !errors.As(r.err, &ne) || !ne.Timeout() {
		t.Fatalf("request to a paused replica = %d %v, want a client timeout", r.status, r.err)
	}
	pending := make(chan result, 1)
	go func() { pending <- get(url, 10*time.Second) }()
	mustHeal(t, heal)
	select {
	case r := <-pending:
		mustOK(t, "held request after resume", r)
	case <-time.After(10 * time.Second):
		t.Fatal("held request did not complete after resume")
	}
	if f := recorded(env, "pause"); len(f) != 1 || !f[0].Healed {
		t.Errorf("history = %+v", f)
	}
}

func TestRestart_ReplacesTheProcessOnTheSameAddress(t *testing.T) {
	env := newEnv(t, false)
	pid, addr := env.proc.PID(0), env.proc.ReplicaAddr(0)
	heal := apply(t, env, &faults.Restart{Replica: 0})
	if env.proc.PID(0) == pid || harnesstest.Alive(pid) || env.proc.ReplicaAddr(0) != addr {
		t.Fatalf("after restart pid %d (was %d) addr %s (was %s)", env.proc.PID(0), pid, env.proc.ReplicaAddr(0), addr)
	}
	mustOK(t, "after restart", get(env.ReplicaURL(0)+"/healthz", 5*time.Second))
	mustHeal(t, heal)
	if f := recorded(env, "restart"); len(f) != 1 || !f[0].Healed {
		t.Errorf("history = %+v", f)
	}
}
