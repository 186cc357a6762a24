package reports

import (
	"cmp"
	"fmt"
	"html/template"

	"github.com/idemcheck/idemcheck/history"
)

// violationView is one violation's section of index.html.
type violationView struct {
	Violation
	N           int
	Anchor      string
	TimelineID  string
	CheckName   string
	Where       string
	Events      string
	SVG         template.HTML
	Note        string
	HasHistory  bool
	HistoryFile string
	FailSeed    uint64
	Steps       []string
	Ops         []opRow
	Charges     []chargeRow
	Faults      []faultRow
}

// opRow is one row of the history table.
type opRow struct {
	history.Op
	Violating            bool
	Class                string
	Key                  string
	InvokeMS, CompleteMS string
	StatusText           string
}

// chargeRow is one ledger charge under the history table.
type chargeRow struct {
	history.Charge
	Violating bool
	AtMS      string
}

// faultRow is one fault under the history table.
type faultRow struct {
	history.Fault
	Violating        bool
	Params           string
	InjectMS, HealMS string
}

// buildViolations draws the first maxDrawnViolations violations and
// returns how many were left out.
func buildViolations(r *Report) ([]violationView, int, error) {
	var out []violationView
	for i, v := range r.Violations {
		if i == maxDrawnViolations {
			return out, len(r.Violations) - i, nil
		}
		vv, err := buildViolation(r, i+1, v)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, vv)
	}
	return out, 0, nil
}

// buildViolation is violation number n with its drawing and tables.
func buildViolation(r *Report, n int, v Violation) (violationView, error) {
	vv := violationView{Violation: v, N: n, Anchor: fmt.Sprintf("violation-%d", n),
		TimelineID: fmt.Sprintf("timeline-%s-%d", slug(v.Family), n),
		CheckName:  checkName(r, v.Family, v.Invariant), Where: where(v), Events: events(v)}
	h := historyOf(r, v)
	if f := family(r, v.Family); f != nil && h != nil && h == r.Counterexamples[v.Family] {
		vv.FailSeed, vv.Steps, vv.HistoryFile = f.FailSeed, f.Steps, f.History
	}
	vv.HistoryFile = cmp.Or(v.HistoryFile, vv.HistoryFile)
	if h == nil {
		return vv, nil
	}
	s := selectEvents(h, v.Violation)
	svg, err := renderTimeline(buildTimeline(vv.TimelineID, s, v.Violation))
	if err != nil {
		return vv, err
	}
	vv.HasHistory, vv.SVG, vv.Note = true, svg, s.note
	vv.Ops, vv.Charges, vv.Faults = opRows(s), chargeRows(s), faultRows(s)
	return vv, nil
}

// opRows are the selected ops as table rows.
func opRows(s *selection) []opRow {
	var rows []opRow
	for _, o := range s.ops {
		row := opRow{Op: o, Violating: s.vOps[o.ID], Class: outcomeClass(o.Outcome), Key: keyText(o),
			InvokeMS: msText(o.Invoke), CompleteMS: msText(o.Complete), StatusText: statusText(o.Status)}
		rows = append(rows, row)
	}
	return rows
}

// chargeRows are the selected ledger charges as table rows.
func chargeRows(s *selection) []chargeRow {
	var rows []chargeRow
	for _, c := range s.charges {
		rows = append(rows, chargeRow{Charge: c, Violating: s.vCharges[c.ID], AtMS: msText(c.At)})
	}
	return rows
}

// faultRows are the selected faults as table rows.
func faultRows(s *selection) []faultRow {
	var rows []faultRow
	for _, f := range s.faults {
		heal := "never healed"
		if f.Healed {
			heal = msText(f.Heal)
		}
		rows = append(rows, faultRow{Fault: f, Violating: s.vFaults[f.ID], Params: faultParams(f),
			InjectMS: msText(f.Inject), HealMS: heal})
	}
	return rows
}
