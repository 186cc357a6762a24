package reports_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/reports"
)

// drawing renders a timeline and parses it inside a page body.
func drawing(t *testing.T, h *history.History, v checker.Violation) *html.Node {
	t.Helper()
	svg, err := reports.TimelineSVG("tl", h, v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(strings.NewReader("<!DOCTYPE html><body>" + string(svg)))
	if err != nil {
		t.Fatal(err)
	}
	return byID(doc, "tl")
}

func laneLabels(svg *html.Node) []string {
	var labels []string
	for _, n := range find(svg, func(n *html.Node) bool { return hasClass(n, "lane-label") }) {
		labels = append(labels, text(n))
	}
	return labels
}

func m1() checker.Violation {
	return sampleReport().Violations[0].Violation
}

func TestTimeline_Lanes(t *testing.T) {
	svg := drawing(t, crashHistory(), m1())
	want := []string{"client 1", "client 2", "replica 0", "replica 1", "gateway ledger", "postgres"}
	if got := laneLabels(svg); !slices.Equal(got, want) {
		t.Errorf("lanes %q, want %q", got, want)
	}
}

func TestTimeline_FaultSpans(t *testing.T) {
	svg := drawing(t, crashHistory(), m1())
	rects := func(id string) int {
		return len(find(byID(svg, id), func(n *html.Node) bool { return n.Data == "rect" }))
	}
	// A link fault spans both ends that have a lane; a process fault its
	// replica; a client link only its replica end.
	for id, n := range map[string]int{"tl-fault-0": 2, "tl-fault-1": 1, "tl-fault-2": 1, "tl-fault-3": 2} {
		if got := rects(id); got != n {
			t.Errorf("%s spans %d lanes, want %d", id, got, n)
		}
	}
	if f := byID(svg, "tl-fault-3"); !hasClass(f, "unhealed") || !strings.Contains(text(f), "never healed") {
		t.Error("unhealed fault not marked")
	}
	if f := byID(svg, "tl-fault-0"); !hasClass(f, "violating") || !hasClass(f, "gateway-fault") {
		t.Errorf("fault 0 classes %q", attr(f, "class"))
	}
}

func TestTimeline_OpsAndCharges(t *testing.T) {
	svg := drawing(t, crashHistory(), m1())
	op1 := byID(svg, "tl-op-1")
	if op1 == nil || !hasClass(op1, "info") || !hasClass(op1, "violating") {
		t.Fatalf("op 1: %v", op1)
	}
	if title := text(op1); !strings.Contains(title, "client 1 → replica 0") || !strings.Contains(title, "150 → 650 ms") {
		t.Errorf("op 1 tooltip: %q", title)
	}
	if byID(svg, "tl-serve-1") == nil {
		t.Error("op 1 has no bar on its replica's lane")
	}
	ch := byID(svg, "tl-charge-ch_3")
	if ch == nil || !strings.Contains(text(ch), "charge ch_3") || len(find(ch, func(n *html.Node) bool { return n.Data == "polygon" })) != 1 {
		t.Error("charge ch_3 not drawn as a diamond with its id")
	}
	labels := find(svg, func(n *html.Node) bool { return hasClass(n, "violation-label") })
	if len(labels) != 5 { // ops 1 and 2, charges ch_2 and ch_3, fault 0
		t.Errorf("%d violation labels, want 5", len(labels))
	}
	if byID(svg, "tl-charge-ch_1") != nil || byID(svg, "tl-charge-ch_d") != nil {
		t.Error("charges of other orders drawn")
	}
}

func TestTimeline_AxisTicks(t *testing.T) {
	svg := drawing(t, crashHistory(), m1())
	var ticks []string
	for _, n := range find(svg, func(n *html.Node) bool { return hasClass(n, "tick-label") }) {
		ticks = append(ticks, text(n))
	}
	if !slices.Equal(ticks, []string{"200", "300", "400", "500", "600", "700", "800", "900", "1000"}) {
		t.Errorf("ticks %q", ticks)
	}
}

func TestTimeline_CapsOps(t *testing.T) {
	h := &history.History{Version: history.Version, Replicas: 3, End: 10 * time.Second}
	for i := range 600 {
		at := time.Duration(i) * 15 * time.Millisecond
		h.Ops = append(h.Ops, history.Op{ID: i, Client: i % 8, Replica: i % 3, Key: "k", Order: "o", Tenant: "t",
			Invoke: at, Complete: at + 40*time.Millisecond, Outcome: history.OK, Status: 201})
	}
	v := checker.Violation{Invariant: "M4", Key: "k", Order: "o", Ops: []int{0, 599}}
	svg := drawing(t, h, v)
	ops := find(svg, func(n *html.Node) bool { return hasClass(n, "op") })
	if len(ops) != 200 {
		t.Errorf("%d ops drawn, want the cap of 200", len(ops))
	}
	for _, id := range []string{"tl-op-0", "tl-op-599"} {
		if byID(svg, id) == nil {
			t.Errorf("violating %s dropped by the cap", id)
		}
	}
	height, _ := strconv.ParseFloat(attr(svg, "height"), 64)
	if height > 1000 {
		t.Errorf("drawing %v px high: unreadable", height)
	}
	var b strings.Builder
	sel := sampleReport()
	sel.Counterexamples = map[string]*history.History{"crash-window": h}
	sel.Violations = []reports.Violation{{Family: "crash-window", Violation: v}}
	if err := reports.WriteHTML(&b, sel); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "capped at the 200 ops nearest the violation") {
		t.Error("the page does not say the drawing was capped")
	}
}

func TestTimeline_NoFilterDrawsEverything(t *testing.T) {
	h := crashHistory()
	svg := drawing(t, h, checker.Violation{Invariant: "M6", Explanation: "run never converged"})
	if n := len(find(svg, func(n *html.Node) bool { return hasClass(n, "op") })); n != len(h.Ops) {
		t.Errorf("%d ops drawn, want all %d", n, len(h.Ops))
	}
}

func TestTimeline_EmptyHistory(t *testing.T) {
	svg := drawing(t, nil, checker.Violation{Invariant: "M6"})
	if got := laneLabels(svg); !slices.Equal(got, []string{"gateway ledger"}) {
		t.Errorf("lanes of an empty history: %q", got)
	}
}

func TestTimeline_NetworkLaneForUnknownTarget(t *testing.T) {
	h := crashHistory()
	h.Faults = append(h.Faults, history.Fault{ID: 9, Name: "partition", Target: "dc1<->dc2", Inject: 500 * time.Millisecond, Heal: 600 * time.Millisecond, Healed: true})
	svg := drawing(t, h, m1())
	if labels := laneLabels(svg); labels[len(labels)-1] != "network" {
		t.Errorf("lanes %q: no network lane", labels)
	}
	if byID(svg, fmt.Sprintf("tl-fault-%d", 9)) == nil {
		t.Error("fault 9 not drawn")
	}
}

// TestTimeline_CoincidingChargesSpread: two charges a microsecond apart on
// a short timeline are two marks, not one.
func TestTimeline_CoincidingChargesSpread(t *testing.T) {
	h := &history.History{Version: history.Version, Replicas: 1, End: 3 * ms, Complete: true,
		Ops: []history.Op{
			{ID: 0, Client: 0, Key: "k", Order: "o", Invoke: 0, Complete: 2 * ms, Outcome: history.OK, Status: 201, ChargeID: "ch_a"},
			{ID: 1, Client: 1, Key: "k", Order: "o", Invoke: 0, Complete: 2 * ms, Outcome: history.OK, Status: 201, ChargeID: "ch_b"},
		},
		Charges: []history.Charge{
			{ID: "ch_a", Order: "o", Amount: 1, Currency: "usd", Status: "succeeded", At: ms},
			{ID: "ch_b", Order: "o", Amount: 1, Currency: "usd", Status: "succeeded", At: ms + time.Microsecond},
			{ID: "ch_c", Order: "o", Amount: 1, Currency: "usd", Status: "succeeded", At: ms + time.Microsecond},
		},
	}
	v := checker.Violation{Invariant: "M1", Order: "o", Ops: []int{0, 1}, Charges: []string{"ch_a", "ch_b", "ch_c"}}
	svg, err := reports.TimelineSVG("t", h, v)
	if err != nil {
		t.Fatal(err)
	}
	var xs []float64
	for _, id := range []string{"ch_a", "ch_b", "ch_c"} {
		m := regexp.MustCompile(`id="t-charge-` + id + `"[^>]*><title>[^<]*</title><polygon points="([0-9.]+),`).FindStringSubmatch(string(svg))
		if m == nil {
			t.Fatalf("no diamond for %s:\n%s", id, svg)
		}
		x, _ := strconv.ParseFloat(m[1], 64)
		xs = append(xs, x)
	}
	if xs[1]-xs[0] < 10 || xs[2]-xs[1] < 10 {
		t.Errorf("coinciding charges drawn on top of each other: x = %v", xs)
	}
}
