package reports_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
)

func markdown(t *testing.T, r *reports.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := reports.WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestMarkdown_VerdictTablesAndReplay(t *testing.T) {
	md := markdown(t, sampleReport())
	for _, want := range []string{
		"### ❌ idemcheck `release-on-error`: **FAILED**, level **L0** (not certified)",
		"| family | verdict | scenarios | seed |",
		"| crash-window | ❌ FAILED | 81 | 34359738375 |",
		"| family | check | verdict | note |",
		"| key-reuse | R2 different payload gets 422 | ⚠️ NON-STRICT | 400 instead of 422 |",
		"| late-retry | E2 retry window covered | ❔ UNKNOWN | late retry never answered |",
		"`idemcheck replay reports/incident-crash-window.yaml --target release-on-error`",
		"Not exercised: protocol P1, P2, E1, E2;",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| M1 no double charge | ✅") {
		t.Error("PASS checks listed in the non-PASS table")
	}
}

func TestMarkdown_OneLinePerViolation(t *testing.T) {
	r := sampleReport()
	r.Violations[0].Explanation = "line one\nline | two"
	md := markdown(t, r)
	if !strings.Contains(md, "(crash-window): line one line | two (tenant") {
		t.Errorf("violation not folded onto one line:\n%s", md)
	}
}

func TestMarkdown_EscapesTableCells(t *testing.T) {
	r := sampleReport()
	r.Checks[9+28].Note = "a|b\nc" // key-reuse R2
	if md := markdown(t, r); !strings.Contains(md, `| a\|b c |`) {
		t.Errorf("note not escaped:\n%s", md)
	}
}

func TestMarkdown_Incomplete(t *testing.T) {
	r := passingReport()
	r.Complete, r.Verdict, r.Interrupted = false, "unknown", "interrupted: context canceled"
	md := markdown(t, r)
	for _, want := range []string{"**UNKNOWN**", "**Incomplete run**: interrupted: context canceled"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
}

func TestMarkdown_CapsViolations(t *testing.T) {
	r := sampleReport()
	for i := range 100 {
		v := r.Violations[0]
		v.Explanation = fmt.Sprintf("violation %d", i)
		r.Violations = append(r.Violations, v)
	}
	md := markdown(t, r)
	if !strings.Contains(md, "- … and 72 more") || strings.Count(md, "\n- **") != 30 {
		t.Errorf("violations not capped at 30:\n%s", md)
	}
}

func ExampleWriteMarkdown() {
	r := passingReport()
	reports.WriteMarkdown(os.Stdout, r)
	// Output:
	// ### ✅ idemcheck `reference`: **PASS**, level **L2** (concurrency-safe)
	//
	// seed 1 · budget 10s · ran 9.87s · 2 replicas
	//
	// | family | verdict | scenarios | seed |
	// |---|---|---:|---:|
	// | concurrent-duplicates | ✅ PASS | 41 | – |
}

// TestMarkdown_KeepsCondensedNoteWhole: summary.md carries a check's
// condensed note whole, never cut.
func TestMarkdown_KeepsCondensedNoteWhole(t *testing.T) {
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

func TestMarkdown_FirstContact(t *testing.T) {
	r := sampleReport()
	r.Contact = &reports.Contact{Trace: "metadata[shop_order]", TraceFound: true, Items: []reports.ContactItem{{Check: "money traced", OK: true}}}
	if md := markdown(t, r); !strings.Contains(md, "money traced by `metadata[shop_order]` (found at first contact)") || strings.Contains(md, "First contact stopped") {
		t.Fatalf("summary of a traced run:\n%s", md)
	}
	r.Contact.Items = append(r.Contact.Items, reports.ContactItem{Check: "the charge reached the gateway", Detail: "502", Blocks: true, Fix: []string{"GATEWAY_URL"}})
	if md := markdown(t, r); !strings.Contains(md, "First contact stopped the run") || !strings.Contains(md, "✗ the charge reached the gateway: 502\n    GATEWAY_URL") {
		t.Fatalf("summary of a run first contact stopped:\n%s", md)
	}
}
