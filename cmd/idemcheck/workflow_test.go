package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/idemcheck/idemcheck/reports"
)

// workflow is the part of a GitHub Actions workflow the test runs.
type workflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Steps []struct {
			Name string `yaml:"name"`
			ID   string `yaml:"id"`
			Run  string `yaml:"run"`
			Uses string `yaml:"uses"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

const nightlyFile = "../../.github/workflows/nightly.yml"

func loadWorkflow(t *testing.T) workflow {
	t.Helper()
	data, err := os.ReadFile(nightlyFile)
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// runner runs a workflow's shell steps as GitHub does (bash -eo
// pipefail) in a folder, with its env, GITHUB_* files and outputs.
type runner struct {
	t       *testing.T
	w       workflow
	dir     string
	env     []string
	outputs map[string]map[string]string
}

func newRunner(t *testing.T, w workflow, night int, vars map[string]string) *runner {
	dir := t.TempDir()
	r := &runner{t: t, w: w, dir: dir, outputs: map[string]map[string]string{}}
	r.env = append(os.Environ(), "PATH="+binaries(t)+":"+os.Getenv("PATH"), "CI=true",
		"GITHUB_RUN_NUMBER="+strconv.Itoa(night), "GITHUB_STEP_SUMMARY="+filepath.Join(dir, "summary"),
		"GITHUB_PATH="+filepath.Join(dir, "path"))
	for k, v := range w.Env {
		if vars[k] == "" {
			r.env = append(r.env, k+"="+v)
		}
	}
	for k, v := range vars {
		r.env = append(r.env, k+"="+v)
	}
	return r
}

var expr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// step runs the step of job whose name starts with name and returns its
// exit code and output.
func (r *runner) step(job, name string, shard int) (int, string) {
	r.t.Helper()
	for _, s := range r.w.Jobs[job].Steps {
		if !strings.HasPrefix(s.Name, name) {
			continue
		}
		script := expr.ReplaceAllStringFunc(s.Run, func(m string) string {
			e := expr.FindStringSubmatch(m)[1]
			switch {
			case e == "matrix.shard":
				return strconv.Itoa(shard)
			case strings.HasPrefix(e, "steps."):
				parts := strings.Split(e, ".") // steps.<id>.outputs.<name>
				return r.outputs[parts[1]][parts[3]]
			}
			r.t.Fatalf("step %q: expression %s unknown to the test", s.Name, m)
			return ""
		})
		out := filepath.Join(r.dir, "output")
		os.WriteFile(out, nil, 0o644)
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = r.dir, append(r.env, "GITHUB_OUTPUT="+out)
		b, _ := cmd.CombinedOutput()
		if s.ID != "" {
			r.outputs[s.ID] = map[string]string{}
			data, _ := os.ReadFile(out)
			for _, line := range strings.Split(string(data), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					r.outputs[s.ID][k] = v
				}
			}
		}
		return cmd.ProcessState.ExitCode(), string(b)
	}
	r.t.Fatalf("no step %q in job %s", name, job)
	return 0, ""
}

func (r *runner) summary() string {
	data, _ := os.ReadFile(filepath.Join(r.dir, "summary"))
	return string(data)
}

// TestWorkflow_PinnedVersion: the nightly job builds one pinned idemcheck.
func TestWorkflow_PinnedVersion(t *testing.T) {
	data, _ := os.ReadFile(nightlyFile)
	w := loadWorkflow(t)
	if v := w.Env["IDEMCHECK_VERSION"]; v == "" || v == "latest" || strings.Contains(string(data), "@latest") {
		t.Errorf("the workflow does not pin idemcheck: IDEMCHECK_VERSION=%q", v)
	}
}

// TestWorkflow_PinnedRefIsInHistory: the pinned version is a release tag
// or a full commit SHA that this repository's history holds, so a team
// that copies the workflow gets a checkout that exists.
func TestWorkflow_PinnedRefIsInHistory(t *testing.T) {
	root := repoRoot(t)
	pin := loadWorkflow(t).Env["IDEMCHECK_VERSION"]
	commit := pin
	switch {
	case fullSHA.MatchString(pin):
	case semverTag.MatchString(pin):
		out, err := exec.Command("git", "-C", root, "rev-parse", "-q", "--verify", "refs/tags/"+pin+"^{commit}").Output()
		if err != nil {
			t.Fatalf("IDEMCHECK_VERSION %s: no such tag in this repository: pin an existing release tag or a full commit SHA of main", pin)
		}
		commit = strings.TrimSpace(string(out))
	default:
		t.Fatalf("IDEMCHECK_VERSION %q: expected a release tag (v1.2.3) or a full 40-character commit SHA (actions/checkout fetches a commit only by its full SHA)", pin)
	}
	if exec.Command("git", "-C", root, "cat-file", "-e", commit+"^{commit}").Run() != nil {
		if git(t, root, "rev-parse", "--is-shallow-repository") == "true" {
			t.Skipf("IDEMCHECK_VERSION %s is not in this shallow clone; a full clone decides whether it is in the history", pin)
		}
		t.Fatalf("IDEMCHECK_VERSION %s: no such commit in this repository: pin a commit of main by its full SHA", pin)
	}
	if exec.Command("git", "-C", root, "merge-base", "--is-ancestor", commit, "HEAD").Run() != nil {
		t.Fatalf("IDEMCHECK_VERSION %s is not in the history of HEAD (another branch's commit, or one rewritten away): pin a commit of main", pin)
	}
}

var (
	fullSHA   = regexp.MustCompile(`^[0-9a-f]{40}$`)
	semverTag = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
)

// TestWorkflow_SeedRangesDisjoint: each night prints its seed range, and
// no two nights share a seed while a shard plays fewer than 2^21 seeds.
func TestWorkflow_SeedRangesDisjoint(t *testing.T) {
	w := loadWorkflow(t)
	var seeds []int
	for _, night := range []int{41, 42} {
		r := newRunner(t, w, night, nil)
		code, out := r.step("certify", "Seed range", 3)
		seed, _ := strconv.Atoi(r.outputs["seed"]["seed"])
		if code != 0 || seed == 0 || !strings.Contains(out, "seeds "+strconv.Itoa(seed)+" to ") {
			t.Fatalf("night %d: exit %d, seed %d, output %q", night, code, seed, out)
		}
		seeds = append(seeds, seed)
	}
	if seeds[1]-seeds[0] < 8<<21 {
		t.Errorf("nights 41 and 42 start %d apart: their seed ranges overlap", seeds[1]-seeds[0])
	}
}

// TestWorkflow_MissingReportIsExplained: a bad target file (exit 2, no
// report) fails the Certify step, and every later step says why instead
// of failing on a missing file.
func TestWorkflow_MissingReportIsExplained(t *testing.T) {
	w := loadWorkflow(t)
	r := newRunner(t, w, 7, map[string]string{"TARGET": "bad.yaml"})
	os.WriteFile(filepath.Join(r.dir, "bad.yaml"), []byte("name: x\nstart: {command: ./s}\npolicy: {ttl: soon}\n"), 0o644)
	r.step("certify", "Seed range", 1)
	if code, out := r.step("certify", "Certify", 1); code != exitUsage {
		t.Fatalf("Certify: exit %d, want 2\n%s", code, out)
	}
	if code, out := r.step("certify", "Summary", 1); code != 0 || !strings.Contains(r.summary(), "wrote no report") {
		t.Errorf("Summary: exit %d\n%s\nstep summary: %s", code, out, r.summary())
	}
	code, out := r.step("merge", "Merge", 0)
	if code == 0 || !strings.Contains(out, "no shard wrote a report") {
		t.Errorf("Merge without shards: exit %d\n%s", code, out)
	}
	if code, out := r.step("merge", "Summary", 0); code != 0 || !strings.Contains(out, "no merged report") {
		t.Errorf("merge Summary: exit %d\n%s", code, out)
	}
}

// TestWorkflow_MergesTheShardsThatReported: two of eight shards reported;
// the merge says so and merges them.
func TestWorkflow_MergesTheShardsThatReported(t *testing.T) {
	w := loadWorkflow(t)
	r := newRunner(t, w, 7, nil)
	for i := 1; i <= 2; i++ {
		rep := &reports.Report{SchemaVersion: reports.SchemaVersion, Target: "payments", Level: "L5", Complete: true, Verdict: "pass",
			Families: []reports.FamilyResult{{Name: "protocol", Verdict: "PASS", Scenarios: 5}},
			Checks:   []reports.Check{{ID: "M1", Name: "no double charge", Family: "protocol", Level: "L1", Verdict: "PASS", Exercised: true}}}
		if _, err := reports.WriteAll(filepath.Join(r.dir, "shards", "idemcheck-report-shard-"+strconv.Itoa(i)), rep); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(r.dir, "shards", "idemcheck-report-shard-3"), 0o755) // a shard that wrote nothing
	code, out := r.step("merge", "Merge", 0)
	if code != 0 || !strings.Contains(out, "only 2 of 8 shards") || !strings.Contains(out, "payments: PASS (level L5) over 2 shards") {
		t.Fatalf("Merge: exit %d\n%s", code, out)
	}
	if code, _ := r.step("merge", "Summary", 0); code != 0 || !strings.Contains(r.summary(), "**PASS**") {
		t.Errorf("merge Summary: exit %d, step summary %q", code, r.summary())
	}
}
