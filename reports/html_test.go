package reports_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
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

// otherExample is a second failing example of crash-window with the same
// op ids as the counterexample but another order and other charges.
func otherExample() *history.History {
	h := crashHistory()
	h.Seed = 99
	for i := range h.Ops {
		h.Ops[i].Order = strings.Replace(h.Ops[i].Order, "ord_c", "ord_x", 1)
		h.Ops[i].Key = strings.Replace(h.Ops[i].Key, "k_c", "k_x", 1)
		h.Ops[i].ChargeID = strings.Replace(h.Ops[i].ChargeID, "ch_", "ch_x", 1)
	}
	for i := range h.Charges {
		h.Charges[i].Order = strings.Replace(h.Charges[i].Order, "ord_c", "ord_x", 1)
		h.Charges[i].ID = strings.Replace(h.Charges[i].ID, "ch_", "ch_x", 1)
	}
	return h
}

// TestHTML_EachViolationDrawnOverItsOwnHistory: every violation's timeline
// holds the ops and charges its headline names, also for a violation of
// another example than the shrunk counterexample, and also after the
// report is read back from its directory.
func TestHTML_EachViolationDrawnOverItsOwnHistory(t *testing.T) {
	r := sampleReport()
	r.Families[3].History = "" // set by WriteAll
	r.Violations[0].History = r.Counterexamples["crash-window"]
	r.Violations = append(r.Violations, reports.Violation{Family: "crash-window", History: otherExample(),
		Replay: "idemcheck run crash-window --target release-on-error --seed 7",
		Violation: checker.Violation{Invariant: "M1", Tenant: "tenant_a", Key: "k_x1", Order: "ord_x1", Source: "crash-window seed=99",
			Explanation: "order ord_x1 charged twice: ch_x2 (op 1) and ch_x3 (op 2)", Ops: []int{1, 2}, Charges: []string{"ch_x2", "ch_x3"}}},
		reports.Violation{Family: "crash-window", Replay: "idemcheck run crash-window --target release-on-error --seed 7",
			Violation: checker.Violation{Invariant: "M1", Order: "ord_y1", Source: "crash-window seed=100",
				Explanation: "order ord_y1 charged twice: ch_y2 (op 1) and ch_y3 (op 2)", Ops: []int{1, 2}, Charges: []string{"ch_y2", "ch_y3"}}})
	assertOwnEvidence(t, r)

	dir := t.TempDir()
	if _, err := reports.WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	back, err := reports.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, reports.ViolationHistoryFile("crash-window", 3))); err != nil {
		t.Errorf("the second example's history is not beside report.json: %v", err)
	}
	assertOwnEvidence(t, back)
}

var chargeID = regexp.MustCompile(`\bch_[A-Za-z0-9]+`)

// assertOwnEvidence checks every violation article of r's page: its
// timeline draws each op and charge the violation names, and every charge
// its explanation names; a violation without its own history draws none.
func assertOwnEvidence(t *testing.T, r *reports.Report) {
	t.Helper()
	_, doc := page(t, r)
	for i, v := range r.Violations {
		art := byID(doc, fmt.Sprintf("violation-%d", i+1))
		if art == nil {
			t.Fatalf("violation %d not on the page", i+1)
		}
		ids := map[string]bool{}
		for n := range art.Descendants() {
			ids[attr(n, "id")] = true
		}
		svg := find(art, func(n *html.Node) bool { return n.Data == "svg" })
		if strings.HasPrefix(v.Order, "ord_y") {
			if len(svg) != 0 {
				t.Errorf("violation %d has no history of its own but draws one", i+1)
			}
			continue
		}
		if len(svg) != 1 {
			t.Fatalf("violation %d: %d timelines", i+1, len(svg))
		}
		tl := attr(svg[0], "id")
		for _, op := range v.Ops {
			if !ids[fmt.Sprintf("%s-op-%d", tl, op)] {
				t.Errorf("violation %d names op %d; its timeline does not draw it", i+1, op)
			}
		}
		for _, ch := range append(v.Charges, chargeID.FindAllString(v.Explanation, -1)...) {
			if !ids[tl+"-charge-"+ch] {
				t.Errorf("violation %d names charge %s; its timeline does not draw it", i+1, ch)
			}
		}
	}
}
