package docker_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/builtin"
	"github.com/idemcheck/idemcheck/certify"
	"github.com/idemcheck/idemcheck/families"
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/docker"
	"github.com/idemcheck/idemcheck/reports"
	"github.com/idemcheck/idemcheck/target"
)

// requireDocker skips without a Docker engine, except on CI (CI=true),
// where container mode is part of what must pass.
func requireDocker(t *testing.T) {
	t.Helper()
	t.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := docker.Available(ctx); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("container mode needs a Docker engine on CI: %v", err)
		}
		t.Skipf("no Docker engine (%v): start Docker (or set DOCKER_HOST) and run `make images` to enable the container-mode tests", err)
	}
}

var buildOnce sync.Once

// requireImages builds the images with images/build.sh, which keeps the
// ones that already exist, once per test binary.
func requireImages(t *testing.T) {
	t.Helper()
	requireDocker(t)
	var err error
	var out []byte
	buildOnce.Do(func() {
		start := time.Now()
		out, err = exec.Command("bash", "../../images/build.sh").CombinedOutput()
		t.Logf("images/build.sh (%s): %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(string(out)))
	})
	if err != nil {
		t.Fatalf("images/build.sh: %v\n%s", err, out)
	}
}

func builtinTarget(t *testing.T, name string) *target.Target {
	t.Helper()
	m, err := builtin.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := m.Target("/container") // only the command's base name matters in container mode
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// leftovers lists containers, volumes and networks that carry the run label.
func leftovers(t *testing.T, runID string) []string {
	t.Helper()
	filter := "label=" + docker.LabelRun
	if runID != "" {
		filter += "=" + runID
	}
	var out []string
	for _, args := range [][]string{
		{"ps", "-a", "-q", "--filter", filter},
		{"volume", "ls", "-q", "--filter", filter},
		{"network", "ls", "-q", "--filter", filter},
	} {
		b, err := exec.Command("docker", args...).Output()
		if err != nil {
			t.Fatalf("docker %v: %v", args, err)
		}
		out = append(out, strings.Fields(string(b))...)
	}
	return out
}

func certifyInDocker(t *testing.T, tg *target.Target, names ...string) *reports.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	rep, err := certify.Run(ctx, tg, certify.Options{Families: families.MustSelect(names...), Seed: 7, Budget: 35 * time.Second, Launch: docker.Launch})
	if err != nil {
		t.Fatalf("certify %s in docker: %v", tg.Name, err)
	}
	t.Logf("certify %s %v in docker: verdict %s level %s in %s", tg.Name, names, rep.Verdict, rep.Level, time.Since(start).Round(time.Millisecond))
	if l := leftovers(t, ""); len(l) > 0 {
		t.Errorf("left behind after certify: %v", l)
	}
	return rep
}

func TestDocker_ReferencePasses(t *testing.T) {
	requireImages(t)
	rep := certifyInDocker(t, builtinTarget(t, "reference"), "concurrent-duplicates", "key-reuse")
	if rep.Verdict != "pass" {
		for _, v := range rep.Violations {
			t.Logf("violation: %+v", v)
		}
		t.Fatalf("reference in docker: verdict %s (%s), want pass", rep.Verdict, rep.Interrupted)
	}
}

func TestDocker_NaiveFailsM1(t *testing.T) {
	requireImages(t)
	rep := certifyInDocker(t, builtinTarget(t, "naive"), "concurrent-duplicates")
	if rep.Verdict != "fail" {
		t.Fatalf("naive in docker: verdict %s, want fail", rep.Verdict)
	}
	for _, c := range rep.Checks {
		if c.ID == "M1" && c.Verdict == "FAILED" {
			return
		}
	}
	t.Fatalf("naive in docker failed, but not M1: %+v", rep.Checks)
}

func TestDocker_CloseLeavesNothing(t *testing.T) {
	requireImages(t)
	ctx := context.Background()
	env, err := docker.Start(ctx, builtinTarget(t, "reference"), harness.Options{Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(leftovers(t, env.RunID())) == 0 {
		t.Fatal("found nothing labelled while running: the leak check would prove nothing")
	}
	if err := env.Kill(0); err != nil { // a killed and a paused container must go too
		t.Fatal(err)
	}
	if err := env.RestartStore(ctx, "redis", false); !errors.Is(err, harness.ErrNoStore) {
		t.Fatalf("restart of redis, which the target lacks: %v, want ErrNoStore", err)
	}
	closeLeavesNothing(t, env)
}

// closeLeavesNothing closes env and fails if anything with its run label
// is left.
func closeLeavesNothing(t *testing.T, env *docker.Env) {
	t.Helper()
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	if l := leftovers(t, env.RunID()); len(l) > 0 {
		t.Fatalf("left behind after Close: %v", l)
	}
}

func TestDocker_FailedStartLeavesNothing(t *testing.T) {
	requireImages(t)
	// The gateway simulator as the "server": it starts, but never answers
	// the ready path, so Start fails after the network, the services, the
	// proxies and the replica containers exist.
	tg := &target.Target{Name: "never-ready", Image: docker.GatewayImage, Replicas: 2, Needs: []string{"postgres"},
		Start:  target.Start{Args: []string{"--addr=0.0.0.0:8080"}},
		Ready:  target.Ready{Path: "/not-here", Timeout: 2 * time.Second},
		Policy: target.Policy{TTL: time.Hour}}
	before := leftovers(t, "")
	_, err := docker.Start(context.Background(), tg, harness.Options{})
	if err == nil {
		t.Fatal("Start succeeded with a server that is never ready")
	}
	t.Logf("start failed as expected: %v", err)
	if l := leftovers(t, ""); len(l) > len(before) {
		t.Fatalf("left behind after a failed Start: %v", l)
	}
}

func TestDocker_MissingImage(t *testing.T) {
	requireDocker(t)
	tg := &target.Target{Name: "missing", Image: "idemcheck/does-not-exist:never", Policy: target.Policy{TTL: time.Hour}}
	_, err := docker.Start(context.Background(), tg, harness.Options{})
	if !errors.Is(err, docker.ErrImageNotFound) || !strings.Contains(err.Error(), "run make images") {
		t.Fatalf("err = %v, want ErrImageNotFound naming make images", err)
	}
}
