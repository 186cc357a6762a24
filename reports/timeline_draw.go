package reports

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/history"
)

// drawOps places each op's bar on its client lane, its serve bar on the
// replica lane it was sent to, and the connector between them.
func (t *timeline) drawOps() {
	for _, o := range t.sel.ops {
		bar, serve := t.opBar(o), t.serveBar(o)
		t.Bars = append(t.Bars, bar)
		t.Serves = append(t.Serves, serve)
		t.barAt[o.ID] = bar
		t.Links = append(t.Links, tlLine{Class: "link" + t.mark(t.sel.vOps[o.ID]),
			X1: bar.X + 0.5, Y1: bar.Y + bar.H, X2: bar.X + 0.5, Y2: serve.Y + serve.H/2})
		if t.sel.vOps[o.ID] {
			t.Labels = append(t.Labels, t.labelRight(bar, t.v.Invariant))
		}
	}
}

// opSpan is an op's horizontal extent; an op that never completed runs
// to the edge of the window.
func (t *timeline) opSpan(o history.Op) (x, w float64) {
	end := o.Complete
	if end < o.Invoke {
		end = t.sel.t1
	}
	x = t.x(o.Invoke)
	return x, max(t.x(end)-x, 3)
}

// opBar is an op's bar on its client lane.
func (t *timeline) opBar(o history.Op) tlShape {
	x, w := t.opSpan(o)
	y := t.rowY(fmt.Sprintf("client%d", o.Client), t.barRow[o.ID]) + 2
	h := tlClientRow - 4
	return tlShape{ID: fmt.Sprintf("%s-op-%d", t.ID, o.ID), Class: "op " + outcomeClass(o.Outcome) + t.mark(t.sel.vOps[o.ID]),
		Title: opTitle(o), X: x, Y: y, W: w, H: h, Text: opText(o, w), TextX: x + 4, TextY: y + h - 5}
}

// serveBar is an op's thin bar on the lane of the replica that served it.
func (t *timeline) serveBar(o history.Op) tlShape {
	x, w := t.opSpan(o)
	y := t.rowY(fmt.Sprintf("replica%d", o.Replica), t.serveRow[o.ID]) + 1
	return tlShape{ID: fmt.Sprintf("%s-serve-%d", t.ID, o.ID), Class: "serve " + outcomeClass(o.Outcome) + t.mark(t.sel.vOps[o.ID]),
		Title: fmt.Sprintf("op %d on replica %d", o.ID, o.Replica), X: x, Y: y, W: w, H: tlServeRow - 2}
}

// drawCharges places the ledger's charges as diamonds on the gateway lane,
// each linked to the ops that were told its id.
func (t *timeline) drawCharges() {
	lane := t.Lanes[t.lanes["gateway"]]
	cy := lane.Y + lane.top + 9
	lastX, row, prevX := math.Inf(-1), 0, math.Inf(-1)
	for _, c := range t.sel.charges {
		d := t.diamond(c, spread(t.x(c.At), prevX, tlChargeGap), cy, 7)
		prevX = d.X
		if len(t.sel.charges) <= tlMaxLabels || t.sel.vCharges[c.ID] {
			row = chargeLabelRow(d.X, lastX, row)
			d.Text, d.TextX, d.TextY = c.ID, d.X, cy+19+float64(row)*10
			lastX = d.X
		}
		t.Charges = append(t.Charges, d)
		t.answers(c, d)
		if t.sel.vCharges[c.ID] {
			t.Labels = append(t.Labels, tlText{Class: "violation-label", Text: t.v.Invariant, Anchor: "start", X: d.X + 10, Y: cy + 4})
		}
	}
}

// chargeLabelRow puts a charge id on the other row than the previous
// label when they would collide.
func chargeLabelRow(x, lastX float64, lastRow int) int {
	if x-lastX < 44 {
		return 1 - lastRow
	}
	return 0
}

// spread places a mark at x, or just right of the previous mark at prev
// when they would coincide: on a short timeline two charges a few
// microseconds apart land on one pixel and would read as one. The
// tooltip keeps the exact time.
func spread(x, prev, gap float64) float64 {
	return max(x, prev+gap)
}

// diamond is one charge's mark centred at (x, cy).
func (t *timeline) diamond(c history.Charge, x, cy, r float64) tlShape {
	pts := fmt.Sprintf("%s,%s %s,%s %s,%s %s,%s", px(x), px(cy-r), px(x+r), px(cy), px(x), px(cy+r), px(x-r), px(cy))
	class := "charge " + chargeClass(c) + t.mark(t.sel.vCharges[c.ID])
	return tlShape{ID: t.ID + "-charge-" + idPart(c.ID), Class: class, Title: chargeTitle(c), X: x, Y: cy - r, W: 2 * r, H: 2 * r, Points: pts}
}

// answers draws a dotted line from charge c up to the end of every op
// whose response named it: where the money went, and who was told.
func (t *timeline) answers(c history.Charge, d tlShape) {
	for _, o := range t.sel.ops {
		if t.sel.ids.Resolve(o.ChargeID) != c.ID {
			continue
		}
		bar := t.barAt[o.ID]
		t.Answers = append(t.Answers, tlLine{Class: "answer" + t.mark(t.sel.vOps[o.ID] && t.sel.vCharges[c.ID]),
			X1: d.X, Y1: d.Y, X2: bar.X + bar.W, Y2: bar.Y + bar.H})
	}
}

// drawFaults shades each fault across the lanes of its target, from
// inject to heal.
func (t *timeline) drawFaults() {
	for _, f := range t.sel.faults {
		t.Faults = append(t.Faults, t.fault(f))
	}
}

// fault is one fault's spans and label.
func (t *timeline) fault(f history.Fault) tlFault {
	end := t.sel.faultEnd(f)
	x := t.x(f.Inject)
	w := max(t.x(end)-x, 3)
	out := tlFault{ID: fmt.Sprintf("%s-fault-%d", t.ID, f.ID), Class: "fault " + faultKind(f.Name) + t.mark(t.sel.vFaults[f.ID]),
		Title: faultTitle(f, end), Label: f.Name, LabelX: x + 3}
	if !f.Healed {
		out.Class += " unhealed"
	}
	for i, key := range laneKeys(f.Target) {
		lane := t.Lanes[t.lanes[key]]
		out.Rects = append(out.Rects, tlShape{X: x, Y: lane.Y + 1, W: w, H: lane.H - 2})
		if i == 0 {
			out.LabelY = lane.Y + 10
		}
	}
	if t.sel.vFaults[f.ID] {
		r := out.Rects[0]
		t.Labels = append(t.Labels, tlText{Class: "violation-label", Text: t.v.Invariant, Anchor: "end", X: r.X + r.W - 3, Y: out.LabelY + 1})
	}
	return out
}

// labelRight labels a violating bar with text just past its end, or just
// before its start when the end is at the right edge.
func (t *timeline) labelRight(bar tlShape, text string) tlText {
	if bar.X+bar.W+40 > t.Width {
		return tlText{Class: "violation-label", Text: text, Anchor: "end", X: bar.X - 4, Y: bar.Y + bar.H - 4}
	}
	return tlText{Class: "violation-label", Text: text, Anchor: "start", X: bar.X + bar.W + 4, Y: bar.Y + bar.H - 4}
}

// mark is the class suffix of a violating element.
func (t *timeline) mark(violating bool) string {
	if violating {
		return " violating"
	}
	return ""
}

// outcomeClass is the CSS class of an outcome; an unknown outcome draws as
// indeterminate.
func outcomeClass(o history.Outcome) string {
	switch o {
	case history.OK, history.Fail:
		return string(o)
	}
	return "info"
}

// chargeClass tells money that moved from a stored decline.
func chargeClass(c history.Charge) string {
	if c.Succeeded() {
		return "succeeded"
	}
	return "declined"
}

// faultKind groups fault names by colour: process, gateway or network.
func faultKind(name string) string {
	switch {
	case strings.HasPrefix(name, "gateway"):
		return "gateway-fault"
	case name == "kill" || name == "pause" || name == "restart" || name == "stop" || strings.HasPrefix(name, "process"):
		return "process-fault"
	}
	return "network-fault"
}

// opText is the label inside a bar, as much as fits.
func opText(o history.Op, w float64) string {
	full := fmt.Sprintf("#%d %s", o.ID, statusText(o.Status))
	switch {
	case w >= float64(len(full))*6+8:
		return full
	case w >= 24:
		return fmt.Sprintf("#%d", o.ID)
	}
	return ""
}

func statusText(status int) string {
	if status == 0 {
		return "no response"
	}
	return fmt.Sprint(status)
}

// opTitle is an op's tooltip: everything the history table says about it.
func opTitle(o history.Op) string {
	var b strings.Builder
	fmt.Fprintf(&b, "op %d · client %d → replica %d\n", o.ID, o.Client, o.Replica)
	fmt.Fprintf(&b, "%s · key %s · order %s · %d %s\n", cmp.Or(o.Tenant, "(no tenant)"), keyText(o), o.Order, o.Amount, o.Currency)
	fmt.Fprintf(&b, "%s · %s %s", cmp.Or(o.Purpose, "request"), statusText(o.Status), o.Outcome)
	if o.ChargeID != "" {
		fmt.Fprintf(&b, " · charge %s", o.ChargeID)
	}
	if o.Replayed {
		b.WriteString(" · replayed")
	}
	fmt.Fprintf(&b, "\n%s → %s ms", msText(o.Invoke), msText(o.Complete))
	if o.Error != "" {
		fmt.Fprintf(&b, "\nerror: %s", o.Error)
	}
	return b.String()
}

// keyText shows the key as sent: none, or the header when it differs from
// the key the harness meant (the quoted form, an over-long value).
func keyText(o history.Op) string {
	switch {
	case o.NoKey:
		return "(none sent)"
	case o.KeyHeader != "" && o.KeyHeader != o.Key:
		return fmt.Sprintf("%s (sent %s)", o.Key, o.KeyHeader)
	}
	return o.Key
}

// chargeTitle is a charge's tooltip.
func chargeTitle(c history.Charge) string {
	return fmt.Sprintf("charge %s · order %s · %d %s · %s\ngateway key %s · at %s ms", c.ID, c.Order, c.Amount, c.Currency, c.Status, c.IdempotencyKey, msText(c.At))
}

// faultTitle is a fault's tooltip.
func faultTitle(f history.Fault, end time.Duration) string {
	s := fmt.Sprintf("fault %d: %s on %s", f.ID, f.Name, f.Target)
	if p := faultParams(f); p != "" {
		s += " (" + p + ")"
	}
	if f.Order != "" {
		s += " · order " + f.Order
	}
	if f.Healed {
		return s + fmt.Sprintf("\n%s → %s ms", msText(f.Inject), msText(end))
	}
	return s + fmt.Sprintf("\n%s ms → never healed (recording ended at %s ms)", msText(f.Inject), msText(end))
}

// idPart makes s usable inside an element id: letters, digits, '_' and
// '-' kept, anything else a '-'.
func idPart(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, s)
}
