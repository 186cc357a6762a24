package reports_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/reports"
)

// bigPassingReport is a passing reference certification as certify builds
// it: six families, every check's note merged by checker.Merge over about
// a thousand examples, as a real run's are.
func bigPassingReport() *reports.Report {
	r := &reports.Report{SchemaVersion: reports.SchemaVersion, Target: "reference", Verdict: "pass", Level: "L5",
		Seed: 1, Budget: reports.Duration(50 * time.Second), Duration: reports.Duration(48 * time.Second), Complete: true, Replicas: 2,
		Started: time.Date(2026, 12, 2, 18, 55, 0, 0, time.UTC)}
	for fi, fam := range []string{"concurrent-duplicates", "key-reuse", "crash-window", "late-retry", "tenants", "protocol"} {
		var results []checker.Result
		for ex := range 300 {
			res := checker.Result{Source: fmt.Sprintf("%s seed=%d", fam, ex)}
			for _, c := range catalog {
				note := fmt.Sprintf("judged %d successful answers against %d ledger charges; %d key epochs answered more than once", ex%13+1, ex%5+1, ex%3)
				if c[0] == "R3" {
					note = fmt.Sprintf("judged %d duplicates sent while their key was in flight; a 409 counts as waited after 1s (max_wait 2s × 0.5)", ex%7)
				}
				res.Checks = append(res.Checks, checker.CheckResult{ID: c[0], Name: c[1], Level: c[2], Verdict: checker.Pass, Exercised: c[0][0] != 'E', Note: note})
			}
			results = append(results, res)
		}
		m := checker.Merge(results...)
		r.Families = append(r.Families, reports.FamilyResult{Name: fam, Level: fmt.Sprintf("L%d", fi%5+1), Verdict: "PASS", Scenarios: 300, Seeds: 40})
		for _, c := range m.Checks {
			r.Checks = append(r.Checks, reports.Check{ID: c.ID, Name: c.Name, Family: fam, Level: c.Level, Verdict: string(c.Verdict), Exercised: c.Exercised, Note: c.Note})
		}
	}
	return r
}

// TestReports_PassingReportIsSmall: a passing certification's junit.xml
// is well under 100 KB and its index.html under 300 KB (they were 897 KB
// and 992 KB: every example's note concatenated into every file).
func TestReports_PassingReportIsSmall(t *testing.T) {
	dir := t.TempDir()
	p, err := reports.WriteAll(dir, bigPassingReport())
	if err != nil {
		t.Fatal(err)
	}
	limits := map[string]int64{p.JUnit: 100 << 10, p.HTML: 300 << 10, p.JSON: 300 << 10, p.Markdown: 16 << 10}
	for path, limit := range limits {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", filepath.Base(path), st.Size())
		if st.Size() > limit {
			t.Errorf("%s is %d bytes, more than %d", filepath.Base(path), st.Size(), limit)
		}
	}
}

// TestReports_NotesCondensed: a merged note reads as one sentence per
// kind, integers summed and constants kept, whole in summary.md.
func TestReports_NotesCondensed(t *testing.T) {
	note := "judged 2 definitive answers; 1 key epochs answered more than once; judged 9 definitive answers; 0 key epochs answered more than once; TTL 1s"
	want := "judged 11 definitive answers; 1 key epochs answered more than once; TTL 1s"
	if got := reports.CondenseNote(note); got != want {
		t.Errorf("CondenseNote:\n got %q\nwant %q", got, want)
	}
	once := "judged 8 duplicates sent while their key was in flight; a 409 counts as waited after 1s (max_wait 2s × 0.5)"
	if got := reports.CondenseNote(once + "; " + strings.Replace(once, "8", "7", 1)); got != strings.Replace(once, "8", "15", 1) {
		t.Errorf("constants must be kept, counts summed: %q", got)
	}
	r := sampleReport()
	long := strings.Repeat("the server answered 400 where the draft asks for 422, which is safe but not strict; ", 3) + "see R2"
	for i := range r.Checks {
		if r.Checks[i].Family == "key-reuse" && r.Checks[i].ID == "R2" {
			r.Checks[i].Note = long
		}
	}
	var b bytes.Buffer
	reports.WriteMarkdown(&b, r)
	if !strings.Contains(b.String(), reports.CondenseNote(long)) {
		t.Errorf("summary.md cuts the note:\n%s", b.String())
	}
}

// TestJUnit_OutputOnlyForFailures: passing cases carry no text; a check
// never exercised is a property, not a skipped case.
func TestJUnit_OutputOnlyForFailures(t *testing.T) {
	var b bytes.Buffer
	if err := reports.WriteJUnit(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<system-out", "<skipped"} {
		if strings.Contains(out, bad) {
			t.Errorf("junit.xml has %s:\n%s", bad, out)
		}
	}
	if !strings.Contains(out, `<property name="not_exercised" value="P1, P2, E1, E2">`) {
		t.Errorf("protocol suite does not list its checks not exercised:\n%s", out)
	}
}

// TestReports_OneWordPerVerdict: a failed run reads FAILED in every file,
// never FAIL.
func TestReports_OneWordPerVerdict(t *testing.T) {
	dir := t.TempDir()
	p, err := reports.WriteAll(dir, sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	fail := regexp.MustCompile(`\bFAIL\b`)
	for _, path := range []string{p.Markdown, p.HTML, p.JUnit} {
		data, _ := os.ReadFile(path)
		if loc := fail.FindIndex(data); loc != nil {
			t.Errorf("%s says FAIL: …%s…", filepath.Base(path), data[max(0, loc[0]-60):min(len(data), loc[1]+60)])
		}
		if !bytes.Contains(data, []byte("FAILED")) {
			t.Errorf("%s never says FAILED", filepath.Base(path))
		}
	}
	for v, w := range map[string]string{"pass": "PASS", "fail": "FAILED", "unknown": "UNKNOWN", "odd": "UNKNOWN"} {
		if got := reports.VerdictWord(v); got != w {
			t.Errorf("VerdictWord(%q) = %q, want %q", v, got, w)
		}
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

// TestReports_NotesCondensedIDs: parts that differ only in their ids
// become one, saying how many it stands for.
func TestReports_NotesCondensedIDs(t *testing.T) {
	note := "judged 2 succeeded charges over 9 orders; charged again outside every promise: ch_Wq7 (ord_a1_oa); charged again outside every promise: ch_Zx9 (ord_b2_oa)"
	want := "judged 2 succeeded charges over 9 orders; charged again outside every promise: ch_Wq7 (ord_a1_oa) (and 1 more like it)"
	if got := reports.CondenseNote(note); got != want {
		t.Errorf("CondenseNote:\n got %q\nwant %q", got, want)
	}
}
