package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// session is one shell session shown in the README: commands, each with
// the output shown under it and, when the README shows `echo $?`, the
// exit code.
type session struct {
	cmd  string
	want []string
	code int // -1: not shown
}

var fence = regexp.MustCompile("(?ms)^```[a-z]*\n(.*?)^```$")

// readmeSessions returns every `$ ./bin/idemcheck ...` and `$ make demo`
// the README shows with the output it shows.
func readmeSessions(t *testing.T) []session {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []session
	for _, m := range fence.FindAllStringSubmatch(string(data), -1) {
		var cur *session
		for _, line := range strings.Split(strings.TrimRight(m[1], "\n"), "\n") {
			switch {
			case line == "$ echo $?" && cur != nil:
				cur.code = -2 // the next line is the code
			case strings.HasPrefix(line, "$ ./bin/idemcheck ") || line == "$ make demo":
				out = append(out, session{cmd: strings.TrimPrefix(line, "$ "), code: -1})
				cur = &out[len(out)-1]
			case strings.HasPrefix(line, "$ "):
				cur = nil
			case cur != nil && cur.code == -2:
				cur.code, _ = strconv.Atoi(line)
			case cur != nil:
				cur.want = append(cur.want, line)
			}
		}
	}
	return out
}

// normal hides what differs from run to run: times, counts, ids, the
// report folder's time stamp, and whether a passing family carries a
// remark (INFORMATIONAL is a pass; the reference's G1 remark depends on
// timing: a replica whose clock a clock_skew fault moved ahead takes over
// a peer's fresh claim and re-sends it under the same request id, in
// about one run in four).
func normal(line string) string {
	for _, r := range []struct{ re, with string }{
		{`\b(PASS|INFORMATIONAL)\b`, "<pass>"},
		{`\b\d{8}-\d{6}(-\d+)?\b`, "<time>"},
		{`\b(ch|ord)_\w+`, "<id>"},
		{`\b(\d+(\.\d+)?(ns|µs|ms|s|m|h))+\b`, "<dur>"},
		{`\b\d+\b`, "<n>"},
	} {
		line = regexp.MustCompile(r.re).ReplaceAllString(line, r.with)
	}
	return strings.Join(strings.Fields(line), " ")
}

// TestREADME_NewcomersWalk runs every idemcheck command the README shows,
// as a newcomer would from a fresh clone (bin/ built, nothing started by
// hand), and checks that it prints what the README shows, line for line
// in order, modulo times, counts, ids and report folder names, and exits
// with the code shown.
func TestREADME_NewcomersWalk(t *testing.T) {
	needPostgres(t)
	if testing.Short() {
		t.Skip("runs the README's commands for about two minutes")
	}
	dir := t.TempDir()
	keepReportsOnFailure(t, dir)
	if err := os.Symlink(binaries(t), filepath.Join(dir, "bin")); err != nil {
		t.Fatal(err)
	}
	// The README's example target files and OpenAPI documents, as in a clone.
	for _, d := range []string{"examples", "target"} {
		if err := os.Symlink(filepath.Join(repoRoot(t), d), filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	// The README's bad files: a duration that is no duration on line 6; a
	// store no one can start on line 3.
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("name: mine\nstart: {command: ./srv}\npolicy:\n  ttl: 2s\n  retry_window: 2s\n  max_wait: soon\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad-store.yaml"), []byte("name: mine\nstart: {command: ./srv}\nneeds: [redis, mongo]\npolicy: {ttl: 2s}\n"), 0o644)
	// The README's misconfigured target: the reference, handed a gateway
	// URL where no gateway listens.
	ref, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "reference.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.NewReplacer("name: reference", "name: wrong-gateway", "../bin/reference-server", "bin/reference-server",
		`GATEWAY_URL: "{{.GatewayURL}}"`, `GATEWAY_URL: "http://127.0.0.1:9"`).Replace(string(ref))
	os.WriteFile(filepath.Join(dir, "wrong-gateway.yaml"), []byte(wrong), 0o644)
	sessions := readmeSessions(t)
	if len(sessions) < 4 {
		t.Fatalf("found %d command sessions in the README", len(sessions))
	}
	for _, s := range sessions {
		args := shellWords(strings.TrimPrefix(s.cmd, "./bin/idemcheck "))
		want := s.want
		if s.cmd == "make demo" { // make's own echo of its recipe is not ours
			args, want = []string{"demo"}, want[2:]
		}
		code, stdout, stderr := idemcheck(t, dir, args...)
		got := strings.Split(strings.TrimRight(stderr+stdout, "\n"), "\n")
		if s.code >= 0 && code != s.code {
			t.Errorf("%s: exit %d, the README shows %d\n%s%s", s.cmd, code, s.code, stderr, stdout)
		}
		i := 0
		for _, w := range want {
			for i < len(got) && normal(got[i]) != normal(w) {
				i++
			}
			if i == len(got) {
				t.Errorf("%s: the README shows\n  %s\nwhich the output lacks (in that order):\n%s%s", s.cmd, w, stderr, stdout)
				break
			}
			i++
		}
	}
}

// keepReportsOnFailure copies dir's idemcheck-report folder to
// $IDEMCHECK_ARTIFACTS (CI uploads it) when the test fails: a verdict the
// README did not expect must leave its evidence (incident file, histories,
// server logs), not vanish with the temporary directory.
func keepReportsOnFailure(t *testing.T, dir string) {
	t.Cleanup(func() {
		dst := os.Getenv("IDEMCHECK_ARTIFACTS")
		if !t.Failed() || dst == "" {
			return
		}
		dst = filepath.Join(dst, "readme-walk")
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Log(err)
			return
		}
		if out, err := exec.Command("cp", "-a", filepath.Join(dir, "idemcheck-report"), dst).CombinedOutput(); err != nil {
			t.Logf("keep the reports: %v: %s", err, out)
			return
		}
		t.Logf("the reports of this walk are in %s", dst)
	})
}

// shellWords splits a command line as a shell would for the README's
// commands: on spaces, except inside double quotes, which are removed.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
