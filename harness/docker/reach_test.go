package docker_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/docker"
)

// dockerCLI runs the docker CLI and returns its output.
func dockerCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// From where a replica sits (its networks), the replica's own links in
// toxiproxy answer, and nothing of the harness does: not toxiproxy's API
// (it listens on the control network alone), not the gateway (on the
// control network alone: its control API, and its provider API other than
// through the replica's link), not the stores directly.
func TestDocker_ReplicasCannotReachTheOracle(t *testing.T) {
	requireImages(t)
	probe := filepath.Join(t.TempDir(), "probe")
	build := exec.Command("go", "build", "-o", probe, "./testdata/probe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the probe: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env, err := docker.Start(ctx, builtinTarget(t, "reference"), harness.Options{Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer closeLeavesNothing(t, env)
	run := docker.LabelRun + "=" + env.RunID()
	replica := dockerCLI(t, "ps", "-q", "--filter", "label="+run, "--filter", "label=idemcheck.role=replica0")
	nets := strings.Fields(dockerCLI(t, "inspect", "-f", `{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}`, replica))
	if len(nets) != 1 {
		t.Fatalf("replica0 is on networks %v, want its data network alone", nets)
	}
	reach := map[string]bool{
		"toxiproxy:20100":    true,  // its gateway link: the probe works
		"toxiproxy:20200":    true,  // its postgres link
		"toxiproxy:8474":     false, // toxiproxy's API
		"toxiproxy-api:8474": false,
		"gateway:12112":      false, // the gateway's control API
		"gateway:12111":      false, // its provider API, past the link
		"gateway:12200":      false,
		"postgres:5432":      false, // the store, past the link
	}
	var addrs []string
	for a := range reach {
		addrs = append(addrs, a)
	}
	name := "idemcheck-" + env.RunID() + "-probe"
	dockerCLI(t, append([]string{"create", "--name", name, "--label", run, "--network", nets[0], "--entrypoint", "/probe", docker.ToxiproxyImage}, addrs...)...)
	dockerCLI(t, "cp", probe, name+":/probe")
	out := dockerCLI(t, "start", "-a", name)
	t.Logf("from replica0's networks:\n%s", out)
	for _, line := range strings.Split(out, "\n") {
		addr, result, _ := strings.Cut(line, " ")
		want, ok := reach[addr]
		if !ok {
			continue
		}
		delete(reach, addr)
		if got := result == "CONNECTED"; got != want {
			t.Errorf("%s from replica0's networks: %s, want reachable=%v", addr, result, want)
		}
	}
	if len(reach) > 0 {
		t.Errorf("no answer for %v", reach)
	}
}
