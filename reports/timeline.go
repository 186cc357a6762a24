package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/target"
)

// Timeline geometry, in SVG user units (CSS pixels at 100% zoom). The
// width fits a 1280-pixel window beside the page margins; lanes grow
// downwards as the history needs.
const (
	tlWidth     = 1180.0
	tlLabelW    = 112.0 // left gutter for lane labels
	tlRightPad  = 56.0  // room for a violation label past the last bar
	tlAxisH     = 34.0
	tlFootH     = 10.0
	tlLanePad   = 5.0
	tlBand      = 13.0 // top band of replica, gateway and other lanes, for fault labels
	tlClientRow = 22.0
	tlServeRow  = 10.0
	tlGatewayH  = 38.0 // diamonds and two rows of charge ids, below the band
	tlPlainH    = 24.0
	tlMaxRows   = 12 // stacked rows per lane before bars overlap
	tlMaxLabels = 24 // charge ids drawn as text; beyond that only tooltips
	tlChargeGap = 16 // least distance between two charge diamonds' centres
)

// timeline is the drawing model of one violation: every shape already
// placed, so the template only prints numbers and escaped text.
type timeline struct {
	ID, Title     string
	Width, Height float64
	AxisY, Bottom float64
	Lanes         []tlLane
	Ticks         []tlTick
	Faults        []tlFault
	Links         []tlLine
	Serves        []tlShape
	Bars          []tlShape
	Answers       []tlLine
	Charges       []tlShape
	Labels        []tlText // violation labels, drawn last, on top
	Note          string

	sel      *selection
	v        checker.Violation
	lanes    map[string]int  // lane key ("client0", "replica1", "gateway") → index
	barRow   map[int]int     // op ID → row on its client lane
	serveRow map[int]int     // op ID → row on its replica lane
	barAt    map[int]tlShape // op ID → its bar, for the charge connectors
	x0, x1   float64         // the plot's horizontal extent
}

// tlLane is one horizontal lane with its label.
type tlLane struct {
	Key, Label, Class string
	Y, H              float64
	top               float64 // where the first row starts, below the lane's top
	rowH              float64
	rows              int
}

// tlTick is one time tick on the axis.
type tlTick struct {
	X     float64
	Label string
}

// tlLine is a connector.
type tlLine struct {
	Class          string
	X1, Y1, X2, Y2 float64
}

// tlShape is an op bar, a replica's serve bar or a charge diamond: one
// <g> with a stable id, classes, a tooltip and an optional text.
type tlShape struct {
	ID, Class, Title string
	X, Y, W, H       float64
	Points           string // a diamond's polygon; empty for a rect
	Text             string
	TextX, TextY     float64
}

// tlFault is one fault: a shaded span on each lane it touches.
type tlFault struct {
	ID, Class, Title, Label string
	Rects                   []tlShape
	LabelX, LabelY          float64
}

// tlText is a violation's label.
type tlText struct {
	Class, Text, Anchor string
	X, Y                float64
}

// TimelineSVG draws violation v over history h as an inline <svg> with id
// id: time on the x axis with millisecond ticks, a lane per client, per
// replica and for the gateway's ledger (plus store or network lanes when
// a fault needs one); request bars from invoke to complete coloured by
// outcome, each with a connector to the replica it was sent to; ledger
// charges as diamonds; faults as translucent spans from inject to heal (to
// the end of recording when never healed); and the violation's ops,
// charges and faults outlined in red and labelled with its invariant.
// Elements carry stable ids (id-op-3, id-charge-ch_1, id-fault-2) and
// classes (op ok violating) so that a browser test can find them. Only the
// ops of v's key and order are drawn, at most 200 of them. The output is
// produced by html/template, so every string from the history is escaped.
// A nil history draws as an empty one.
func TimelineSVG(id string, h *history.History, v checker.Violation) (template.HTML, error) {
	if h == nil {
		h = &history.History{}
	}
	return renderTimeline(buildTimeline(id, selectEvents(h, v), v))
}

// renderTimeline executes the SVG template.
func renderTimeline(t *timeline) (template.HTML, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, "timeline", t); err != nil {
		return "", fmt.Errorf("draw timeline %s: %w", t.ID, err)
	}
	return template.HTML(b.String()), nil // html/template escaped every field
}

// buildTimeline places every shape of a selection.
func buildTimeline(id string, s *selection, v checker.Violation) *timeline {
	t := &timeline{ID: id, Width: tlWidth, sel: s, v: v, Note: s.note, lanes: map[string]int{},
		barRow: map[int]int{}, serveRow: map[int]int{}, barAt: map[int]tlShape{}, x0: tlLabelW, x1: tlWidth - tlRightPad}
	t.Title = fmt.Sprintf("%s timeline: %s", v.Invariant, oneLine(v.Explanation))
	t.layoutLanes()
	t.axis()
	t.drawFaults()
	t.drawOps()
	t.drawCharges()
	return t
}

// x maps a time offset to a horizontal position in the plot.
func (t *timeline) x(d time.Duration) float64 {
	span := float64(t.sel.t1 - t.sel.t0)
	f := float64(d-t.sel.t0) / span
	return t.x0 + math.Max(0, math.Min(1, f))*(t.x1-t.x0)
}

// layoutLanes stacks the lanes: clients, replicas, gateway, then each
// store (a link to it cut, or the store restarted) and network when a
// fault needs them.
func (t *timeline) layoutLanes() {
	for _, c := range clientsOf(t.sel.ops) {
		rows := t.stackRows(t.barRow, func(o history.Op) bool { return o.Client == c })
		t.addLane(fmt.Sprintf("client%d", c), fmt.Sprintf("client %d", c), "client", tlLanePad, tlClientRow, rows)
	}
	for _, r := range replicasOf(t.sel) {
		rows := t.stackRows(t.serveRow, func(o history.Op) bool { return o.Replica == r })
		t.addLane(fmt.Sprintf("replica%d", r), fmt.Sprintf("replica %d", r), "replica", tlBand, tlServeRow, rows)
	}
	t.addLane("gateway", "gateway ledger", "gateway", tlBand, tlGatewayH, 1)
	for _, key := range append(slices.Clone(target.Stores), "network") {
		if t.faultNeeds(key) {
			t.addLane(key, key, key, tlBand, tlPlainH-tlBand-tlLanePad, 1)
		}
	}
	t.Bottom = t.AxisY
	if n := len(t.Lanes); n > 0 {
		t.Bottom = t.Lanes[n-1].Y + t.Lanes[n-1].H
	}
	t.Height = t.Bottom + tlFootH
}

// addLane appends a lane below the last one: rows of height rowH
// starting top below its upper edge.
func (t *timeline) addLane(key, label, class string, top, rowH float64, rows int) {
	t.AxisY = tlAxisH
	y := tlAxisH + 4
	if n := len(t.Lanes); n > 0 {
		y = t.Lanes[n-1].Y + t.Lanes[n-1].H
	}
	h := math.Max(top+float64(rows)*rowH+tlLanePad, tlPlainH)
	t.lanes[key] = len(t.Lanes)
	t.Lanes = append(t.Lanes, tlLane{Key: key, Label: label, Class: class, Y: y, H: h, top: top, rowH: rowH, rows: rows})
}

// stackRows assigns the ops of one lane (those in) to rows, recorded in
// rows, so that overlapping requests do not hide each other, and returns
// the number of rows used. The assignment is greedy by invoke time.
func (t *timeline) stackRows(rows map[int]int, in func(history.Op) bool) int {
	var ends []time.Duration
	for _, o := range t.sel.ops {
		if !in(o) {
			continue
		}
		row := firstFree(ends, o.Invoke)
		if row == len(ends) {
			ends = append(ends, 0)
		}
		ends[row] = max(o.Complete, o.Invoke+1)
		rows[o.ID] = row
	}
	return max(1, len(ends))
}

// firstFree returns the first row free at time at, or len(ends). Rows past
// the cap are reused, overlapping.
func firstFree(ends []time.Duration, at time.Duration) int {
	for i, end := range ends {
		if end <= at {
			return i
		}
	}
	if len(ends) >= tlMaxRows {
		return len(ends) - 1
	}
	return len(ends)
}

// rowY is the top of row in lane key.
func (t *timeline) rowY(key string, row int) float64 {
	l := t.Lanes[t.lanes[key]]
	return l.Y + l.top + float64(min(row, l.rows-1))*l.rowH
}

// axis places the ticks: a "nice" step (1, 2 or 5 × 10ⁿ ms) giving about
// ten ticks across the window.
func (t *timeline) axis() {
	lo, hi := ms(t.sel.t0), ms(t.sel.t1)
	step := niceStep((hi - lo) / 10)
	for v := math.Ceil(lo/step) * step; v <= hi+step/1e6; v += step {
		d := time.Duration(v * float64(time.Millisecond))
		t.Ticks = append(t.Ticks, tlTick{X: t.x(d), Label: formatMS(v, step)})
	}
}

// niceStep rounds raw up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// formatMS prints a tick value with no more decimals than its step needs.
func formatMS(v, step float64) string {
	decimals := max(0, int(math.Ceil(-math.Log10(step))))
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// ms converts a duration to fractional milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// msText prints an offset in milliseconds, to a tenth.
func msText(d time.Duration) string { return strconv.FormatFloat(ms(d), 'f', -1, 64) }

// clientsOf lists the clients of ops, ascending.
func clientsOf(ops []history.Op) []int {
	seen := map[int]bool{}
	for _, o := range ops {
		seen[o.Client] = true
	}
	return sortedKeys(seen)
}

// replicasOf lists the replicas to draw: every replica of the run, every
// replica an op was sent to and every replica a fault targets.
func replicasOf(s *selection) []int {
	seen := map[int]bool{}
	for r := range s.h.Replicas {
		seen[r] = true
	}
	for _, o := range s.ops {
		seen[o.Replica] = true
	}
	for _, f := range s.faults {
		for _, end := range faultEnds(f.Target) {
			if n, ok := replicaIndex(end); ok {
				seen[n] = true
			}
		}
	}
	return sortedKeys(seen)
}

// faultEnds splits a fault target into its ends: "replica1->gateway" has
// two, "replica0" and "gateway" one each.
func faultEnds(target string) []string {
	var ends []string
	for _, e := range strings.Split(target, "->") {
		if e = strings.TrimSpace(e); e != "" {
			ends = append(ends, e)
		}
	}
	return ends
}

// replicaIndex parses "replica3" as 3.
func replicaIndex(end string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(end, "replica"))
	return n, err == nil && strings.HasPrefix(end, "replica") && n >= 0
}

// laneKeys maps a fault target to the lanes it is drawn on: both ends of
// a link that have a lane (the client end has none: every client shares
// the link, so the replica end carries it), the replica of a process
// fault, the gateway for gateway faults; the network lane when no end has
// a lane.
func laneKeys(faultTarget string) []string {
	var keys []string
	for _, end := range faultEnds(faultTarget) {
		switch {
		case end == "gateway", slices.Contains(target.Stores, end):
			keys = append(keys, end)
		case strings.HasPrefix(end, "replica"):
			if _, ok := replicaIndex(end); ok {
				keys = append(keys, end)
			}
		}
	}
	if len(keys) == 0 {
		return []string{"network"}
	}
	return keys
}

// faultNeeds reports whether a drawn fault needs lane key.
func (t *timeline) faultNeeds(key string) bool {
	for _, f := range t.sel.faults {
		for _, k := range laneKeys(f.Target) {
			if k == key {
				return true
			}
		}
	}
	return false
}

func sortedKeys(m map[int]bool) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
