// Package images_test checks images/build.sh against the tool: it tags
// exactly the images container mode runs, and labels each with a hash of
// its sources so that `make images` rebuilds what changed.
package images_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	dockerenv "github.com/idemcheck/idemcheck/harness/docker"
)

func buildSh(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"build.sh"}, args...)...)
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("build.sh %v: %v\n%s", args, err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestBuild_TagsWhatTheToolRuns: the store tags are the versions the tool
// asks for (PostgreSQL's major, not the host's newest).
func TestBuild_TagsWhatTheToolRuns(t *testing.T) {
	got := buildSh(t, nil, "--print-tags")
	want := []string{dockerenv.GatewayImage, dockerenv.ToxiproxyImage, dockerenv.ReferenceImage, dockerenv.PostgresImage, dockerenv.RedisImage, dockerenv.MariaDBImage}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("build.sh tags %v; the tool runs %v", got, want)
	}
}

// TestBuild_SourceHashes: each image's source hash is stable from run to
// run (the label an unchanged checkout finds) and differs between images.
func TestBuild_SourceHashes(t *testing.T) {
	env := []string{"IDEMCHECK_IMAGES=gateway-sim reference-server"}
	a, b := buildSh(t, env, "--print-hashes"), buildSh(t, env, "--print-hashes")
	if !slices.Equal(a, b) || len(a) != 2 {
		t.Fatalf("hashes not stable: %v then %v", a, b)
	}
	h0, h1 := strings.Fields(a[0]), strings.Fields(a[1])
	if len(h0) != 2 || len(h1) != 2 || len(h0[1]) != 16 || h0[1] == h1[1] {
		t.Errorf("want one 16-digit hash per image, distinct: %v", a)
	}
}
