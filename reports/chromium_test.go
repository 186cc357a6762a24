package reports_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/idemcheck/idemcheck/reports"
)

// chromiumNames are the binaries tried, after $IDEMCHECK_CHROMIUM.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"}

// chromium finds a headless-capable Chromium. Without one the test skips
// on a workstation and fails in CI (CI=true), where .ci/run installs
// Debian's chromium package and a silent skip would hide a broken report.
func chromium(t *testing.T) string {
	t.Helper()
	names := chromiumNames
	if env := os.Getenv("IDEMCHECK_CHROMIUM"); env != "" {
		names = []string{env}
	}
	for _, n := range names {
		if path, err := exec.LookPath(n); err == nil {
			return path
		}
	}
	msg := "no Chromium found (tried " + strings.Join(names, ", ") + "; set IDEMCHECK_CHROMIUM or apt-get install chromium)"
	if ci := os.Getenv("CI"); ci == "true" || ci == "1" {
		t.Fatal(msg + ": required in CI")
	}
	t.Skip(msg)
	return ""
}

// artifacts is where the screenshot goes: $IDEMCHECK_ARTIFACTS when set,
// so CI uploads it, else a temporary directory.
func artifacts(t *testing.T) string {
	dir := os.Getenv("IDEMCHECK_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// headless runs Chromium once on page with extra flags and returns stdout.
func headless(ctx context.Context, t *testing.T, bin, page string, flags ...string) []byte {
	t.Helper()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--no-first-run", "--user-data-dir=" + t.TempDir()}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, fileURL(page))...)
	cmd.WaitDelay = 5 * time.Second // a leftover renderer must not hold the pipes open
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v (context: %v)\n%s", bin, strings.Join(flags, " "), err, ctx.Err(), stderr.String())
	}
	return stdout.Bytes()
}

func fileURL(path string) string {
	abs, _ := filepath.Abs(path)
	return (&url.URL{Scheme: "file", Path: abs}).String()
}

// probe is appended to a copy of index.html so that the browser reports
// what it laid out: the timeline's box and the violating bar's stroke.
const probe = `<script>
(function () {
  function box(e) {
    if (!e) return null;
    var r = e.getBoundingClientRect(), s = getComputedStyle(e);
    return {w: r.width, h: r.height, top: r.top, display: s.display, visibility: s.visibility, stroke: s.stroke};
  }
  document.body.setAttribute("data-probe", JSON.stringify({
    svg: box(document.getElementById("timeline-crash-window-1")),
    op: box(document.querySelector("#timeline-crash-window-1 .op.violating rect"))
  }));
})();
</script>`

// windowHeight is the screenshot's height: the first violation's
// timeline must be inside it.
const windowHeight = 2000

type probeBox struct {
	W, H, Top           float64
	Display, Visibility string
	Stroke              string
}

func TestChromium_RendersViolationTimeline(t *testing.T) {
	bin := chromium(t)
	out := artifacts(t)
	p, err := reports.WriteAll(filepath.Join(out, "sample-report"), sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	shot := filepath.Join(out, "report-screenshot.png")
	headless(ctx, t, bin, p.HTML, "--screenshot="+shot, "--window-size=1280,"+strconv.Itoa(windowHeight))
	fi, err := os.Stat(shot)
	if err != nil || fi.Size() < 10<<10 {
		t.Fatalf("screenshot %s: %v, %v bytes; want > 10 KB", shot, err, fi)
	}
	t.Logf("screenshot: %s (%d KB)", shot, fi.Size()>>10)

	probed := withProbe(t, p.HTML)
	dom := headless(ctx, t, bin, probed, "--dump-dom", "--window-size=1280,"+strconv.Itoa(windowHeight))
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	svg := byID(doc, "timeline-crash-window-1")
	if svg == nil || svg.Data != "svg" {
		t.Fatal("dumped DOM has no timeline svg")
	}
	if op := byID(svg, "timeline-crash-window-1-op-1"); op == nil || !hasClass(op, "violating") {
		t.Fatal("dumped DOM has no violating op in the timeline")
	}
	checkLayout(t, attr(find(doc, func(n *html.Node) bool { return n.Data == "body" })[0], "data-probe"))
}

// withProbe writes a copy of page with the probe script and returns it.
func withProbe(t *testing.T, page string) string {
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probed := filepath.Join(t.TempDir(), "probe.html")
	doc := strings.Replace(string(data), "</body>", probe+"</body>", 1)
	if err := os.WriteFile(probed, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return probed
}

// checkLayout asserts that the browser laid the timeline out visibly and
// painted the violating bar with the red outline.
func checkLayout(t *testing.T, raw string) {
	t.Logf("probe: %s", raw)
	var got struct{ SVG, Op *probeBox }
	if err := json.Unmarshal([]byte(raw), &got); err != nil || got.SVG == nil || got.Op == nil {
		t.Fatalf("probe %q: %v", raw, err)
	}
	if s := got.SVG; s.W < 800 || s.H < 150 || s.Display == "none" || s.Visibility != "visible" || s.Top+s.H > windowHeight {
		t.Errorf("timeline not visible in a %d-pixel window: %+v", windowHeight, *s)
	}
	if o := got.Op; o.W <= 0 || o.Stroke != "rgb(209, 36, 47)" {
		t.Errorf("violating bar not outlined in red: %+v", *o)
	}
}
