package reports_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/idemcheck/idemcheck/reports"
)

// page renders r and parses it as a browser would.
func page(t *testing.T, r *reports.Report) (string, *html.Node) {
	t.Helper()
	var b bytes.Buffer
	if err := reports.WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("index.html does not parse: %v", err)
	}
	return b.String(), doc
}

// find returns every element under n that match.
func find(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && match(d) {
			out = append(out, d)
		}
	}
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return slices.Contains(strings.Fields(attr(n, "class")), class)
}

func byID(doc *html.Node, id string) *html.Node {
	if ns := find(doc, func(n *html.Node) bool { return attr(n, "id") == id }); len(ns) == 1 {
		return ns[0]
	}
	return nil
}

func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

func TestHTML_VerdictAndChecks(t *testing.T) {
	_, doc := page(t, sampleReport())
	if b := byID(doc, "verdict-badge"); b == nil || text(b) != "FAILED" || !hasClass(b, "fail") {
		t.Errorf("verdict badge wrong: %v", b)
	}
	if b := byID(doc, "level-badge"); b == nil || text(b) != "L0 not certified" {
		t.Errorf("level badge wrong")
	}
	if byID(doc, "incomplete") != nil {
		t.Error("a complete run has the incomplete banner")
	}
	cells := find(doc, func(n *html.Node) bool { return n.Data == "td" && hasClass(n, "grade") })
	count := map[string]int{}
	for _, c := range cells {
		for _, class := range []string{"pass", "non-strict", "informational", "failed", "unknown", "not-exercised"} {
			if hasClass(c, class) {
				count[class]++
			}
		}
	}
	// The families table grades 5 cells, the checks matrix 70.
	want := map[string]int{"pass": 50 + 2, "non-strict": 1 + 1, "informational": 1, "failed": 1 + 1, "unknown": 1 + 1, "not-exercised": 16}
	for class, n := range want {
		if count[class] != n {
			t.Errorf("%d %s cells, want %d", count[class], class, n)
		}
	}
	links := find(doc, func(n *html.Node) bool { return n.Data == "a" && attr(n, "href") == "#violation-1" })
	if len(links) != 1 || text(links[0]) != "FAILED" {
		t.Errorf("the FAILED M1 cell does not link to its violation")
	}
}

func TestHTML_ViolationTimeline(t *testing.T) {
	_, doc := page(t, sampleReport())
	svg := byID(doc, "timeline-crash-window-1")
	if svg == nil || svg.Data != "svg" {
		t.Fatal("no <svg id=timeline-crash-window-1>")
	}
	for _, id := range []string{"timeline-crash-window-1-op-1", "timeline-crash-window-1-op-2", "timeline-crash-window-1-charge-ch_2", "timeline-crash-window-1-fault-0"} {
		if n := byID(svg, id); n == nil || !hasClass(n, "violating") {
			t.Errorf("%s missing or not violating", id)
		}
	}
	if n := byID(svg, "timeline-crash-window-1-op-3"); n == nil || hasClass(n, "violating") || !hasClass(n, "ok") {
		t.Errorf("op 3 should be drawn as a plain ok op")
	}
	if byID(svg, "timeline-crash-window-1-op-0") != nil {
		t.Error("op 0 (another key) drawn on the M1 timeline")
	}
	rows := find(doc, func(n *html.Node) bool {
		return n.Data == "tr" && strings.HasPrefix(attr(n, "id"), "timeline-crash-window-1-row-")
	})
	var violating []string
	for _, r := range rows {
		if hasClass(r, "violating") {
			violating = append(violating, attr(r, "id"))
		}
	}
	if len(rows) != 4 || !slices.Equal(violating, []string{"timeline-crash-window-1-row-1", "timeline-crash-window-1-row-2"}) {
		t.Errorf("history table: %d rows, violating %v", len(rows), violating)
	}
	pre := find(byID(doc, "violation-1"), func(n *html.Node) bool { return n.Data == "pre" && hasClass(n, "replay") })
	if len(pre) != 1 || text(pre[0]) != "idemcheck replay reports/incident-crash-window.yaml --target release-on-error" {
		t.Error("no replay command in a <pre>")
	}
	if byID(doc, "timeline-key-reuse-2") == nil {
		t.Error("second violation not drawn")
	}
}

func TestHTML_SelfContained(t *testing.T) {
	out, doc := page(t, sampleReport())
	for _, bad := range []string{"http://", "https://", "//cdn", "@import", "url("} {
		if strings.Contains(out, bad) {
			t.Errorf("index.html contains %q", bad)
		}
	}
	for _, n := range find(doc, func(*html.Node) bool { return true }) {
		if n.Data == "script" || n.Data == "link" || n.Data == "img" || n.Data == "iframe" {
			t.Errorf("index.html has a <%s>", n.Data)
		}
		for _, a := range n.Attr {
			if (a.Key == "src" || a.Key == "href") && strings.Contains(a.Val, ":") {
				t.Errorf("<%s %s=%q> points off the page", n.Data, a.Key, a.Val)
			}
		}
	}
}

func TestHTML_EscapesHistoryText(t *testing.T) {
	r := sampleReport()
	evil := `<script>alert(1)</script>"><img src=x onerror=alert(2)>`
	r.Violations[0].Explanation = evil
	r.Target = evil
	r.Counterexamples["crash-window"].Ops[1].Purpose = evil
	r.Counterexamples["crash-window"].Faults[0].Name = evil
	out, doc := page(t, r)
	if strings.Contains(out, "<script>") || strings.Contains(out, "<img") {
		t.Fatal("markup from the report reached the page unescaped")
	}
	if len(find(doc, func(n *html.Node) bool { return n.Data == "script" || n.Data == "img" })) > 0 {
		t.Fatal("injected elements parsed")
	}
	if !strings.Contains(text(byID(doc, "violation-1")), evil) {
		t.Error("escaped text does not read back as written")
	}
}

func TestHTML_IncompleteBanner(t *testing.T) {
	r := sampleReport()
	r.Complete, r.Interrupted = false, "interrupted: signal: interrupt"
	_, doc := page(t, r)
	b := byID(doc, "incomplete")
	if b == nil || !strings.Contains(text(b), "signal: interrupt") {
		t.Fatal("no incomplete banner")
	}
}

func TestHTML_UnknownVerdictIsGrey(t *testing.T) {
	r := passingReport()
	r.Verdict = "something new"
	_, doc := page(t, r)
	if b := byID(doc, "verdict-badge"); !hasClass(b, "unknown") || text(b) != "UNKNOWN" {
		t.Errorf("unreadable verdict badge: %q", text(b))
	}
}

func TestHTML_NoCounterexample(t *testing.T) {
	r := sampleReport()
	r.Counterexamples = nil
	out, doc := page(t, r)
	if byID(doc, "timeline-crash-window-1") != nil || !strings.Contains(out, "No history was kept for this violation") {
		t.Error("a violation without history should say so, not draw")
	}
}

func TestHTML_Deterministic(t *testing.T) {
	a, _ := page(t, sampleReport())
	b, _ := page(t, sampleReport())
	if a != b {
		t.Error("the same report rendered two different pages")
	}
}
