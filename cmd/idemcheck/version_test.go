package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reports"
)

// versionJSON runs the binary's `version --json` and decodes it.
func versionJSON(t *testing.T, bin string) reports.Tool {
	t.Helper()
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version --json: %v", bin, err)
	}
	var tool reports.Tool
	if err := json.Unmarshal(out, &tool); err != nil {
		t.Fatalf("version --json printed %q: %v", out, err)
	}
	return tool
}

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// repoRoot is the repository's top folder, or a skip when the tests do
// not run in a git checkout (a source archive).
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout (no .git): the repository's history cannot be read")
	}
	return strings.TrimSpace(string(out))
}

// TestVersion_NamesTheCommitOfACheckout: idemcheck built in a clone
// prints that clone's commit, its time and an unmodified tree, as text
// and as JSON.
func TestVersion_NamesTheCommitOfACheckout(t *testing.T) {
	root := repoRoot(t)
	head := git(t, root, "rev-parse", "HEAD")
	clone := filepath.Join(t.TempDir(), "idemcheck")
	git(t, root, "clone", "-q", "--no-checkout", root, clone)
	git(t, clone, "checkout", "-q", head)
	bin := filepath.Join(t.TempDir(), "idemcheck")
	build := exec.Command("go", "build", "-o", bin, "./cmd/idemcheck")
	build.Dir, build.Env = clone, append(os.Environ(), "GOFLAGS=-buildvcs=true")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in a clone: %v\n%s", err, out)
	}
	tool := versionJSON(t, bin)
	committed, err := time.Parse(time.RFC3339, git(t, clone, "log", "-1", "--format=%cI"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := time.Parse(time.RFC3339, tool.CommitTime)
	if tool.Commit != head || tool.Modified || err != nil || !got.Equal(committed) {
		t.Errorf("version --json of a build at %s (committed %s): %+v", head, committed, tool)
	}
	// Go names the build by the tag on its commit, or by a pseudo-version
	// that ends in the commit's first twelve characters.
	if tags := strings.Fields(git(t, clone, "tag", "--points-at", head)); !strings.Contains(tool.Version, head[:12]) && !slices.Contains(tags, tool.Version) {
		t.Errorf("version %q names neither commit %s nor its tags %v", tool.Version, head, tags)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"idemcheck " + tool.Version, "commit:      " + head[:12] + " (" + head + ")", "modified:    no", "commit time: " + tool.CommitTime} {
		if !strings.Contains(string(out), want) {
			t.Errorf("version lacks %q:\n%s", want, out)
		}
	}
}

// TestVersion_UnknownWithoutVCS: a build that recorded no version control
// information says unknown, plainly, and why.
func TestVersion_UnknownWithoutVCS(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "idemcheck")
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if tool := versionJSON(t, bin); tool != (reports.Tool{Version: "unknown", Commit: "unknown", CommitTime: "unknown"}) {
		t.Errorf("version --json without VCS information: %+v", tool)
	}
	out, _ := exec.Command(bin, "version").Output()
	for _, want := range []string{"idemcheck unknown\n", "commit:      unknown\n", "modified:    unknown\n", "no version control information"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("version lacks %q:\n%s", want, out)
		}
	}
}
