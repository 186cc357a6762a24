package reports_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
)

// The JUnit shape as a CI test tab reads it.
type jSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []jSuite `xml:"testsuite"`
}

type jSuite struct {
	Name       string      `xml:"name,attr"`
	Tests      int         `xml:"tests,attr"`
	Failures   int         `xml:"failures,attr"`
	Errors     int         `xml:"errors,attr"`
	Skipped    int         `xml:"skipped,attr"`
	Properties []jProperty `xml:"properties>property"`
	Cases      []jCase     `xml:"testcase"`
}

type jProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type jCase struct {
	Classname string    `xml:"classname,attr"`
	Name      string    `xml:"name,attr"`
	Failure   *jProblem `xml:"failure"`
	Error     *jProblem `xml:"error"`
	Skipped   *jProblem `xml:"skipped"`
	SystemOut string    `xml:"system-out"`
	Props     []jProp   `xml:"properties>property"`
}

type jProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func parseJUnit(t *testing.T, r *reports.Report) jSuites {
	t.Helper()
	var b bytes.Buffer
	if err := reports.WriteJUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("no XML declaration: %.60s", b.String())
	}
	var doc jSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("junit.xml does not parse: %v\n%s", err, b.String())
	}
	return doc
}

type jProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

func (c jCase) prop(name string) string {
	for _, p := range c.Props {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

func (s jSuites) find(class, name string) jCase {
	for _, su := range s.Suites {
		for _, c := range su.Cases {
			if c.Classname == class && c.Name == name {
				return c
			}
		}
	}
	return jCase{}
}

func TestJUnit_Counts(t *testing.T) {
	r := sampleReport()
	doc := parseJUnit(t, r)
	// 5 families × 14 checks; M1 crash-window FAILED; E2 late-retry
	// UNKNOWN; P1, P2 unexercised outside key-reuse (4 families) and E1
	// outside late-retry (4; E2 is exercised where it is UNKNOWN, and not
	// exercised in the other 4).
	// Not exercised is a property, not a skip: nothing was skipped.
	want := jSuites{Tests: 70, Failures: 1, Errors: 1, Skipped: 0}
	if doc.Tests != want.Tests || doc.Failures != want.Failures || doc.Errors != want.Errors || doc.Skipped != want.Skipped {
		t.Errorf("totals tests=%d failures=%d errors=%d skipped=%d, want %d %d %d %d",
			doc.Tests, doc.Failures, doc.Errors, doc.Skipped, want.Tests, want.Failures, want.Errors, want.Skipped)
	}
	if len(doc.Suites) != 5 {
		t.Fatalf("%d suites, want one per family", len(doc.Suites))
	}
	sum := 0
	for _, s := range doc.Suites {
		if s.Tests != len(s.Cases) {
			t.Errorf("suite %s says %d tests, holds %d", s.Name, s.Tests, len(s.Cases))
		}
		sum += s.Failures + s.Errors + s.Skipped
	}
	if sum != doc.Failures+doc.Errors+doc.Skipped {
		t.Error("suite counts do not add up to the totals")
	}
}

func TestJUnit_Grades(t *testing.T) {
	doc := parseJUnit(t, sampleReport())
	m1 := doc.find("crash-window", "M1 no double charge")
	if m1.Failure == nil || m1.Failure.Type != "FAILED" {
		t.Fatalf("M1 is not a FAILED failure: %+v", m1)
	}
	for _, want := range []string{"charged twice", "idemcheck replay reports/incident-crash-window.yaml --target release-on-error", "ops 1, 2", "charges ch_2, ch_3"} {
		if !strings.Contains(m1.Failure.Text+m1.Failure.Message, want) {
			t.Errorf("M1 failure lacks %q:\n%s", want, m1.Failure.Text)
		}
	}
	if e2 := doc.find("late-retry", "E2 retry window covered"); e2.Error == nil || e2.Error.Type != "UNKNOWN" {
		t.Errorf("UNKNOWN E2 is not an <error>: %+v", e2)
	}
	if r2 := doc.find("key-reuse", "R2 different payload gets 422"); r2.Failure != nil || r2.prop("verdict") != "NON-STRICT" || r2.prop("note") != "400 instead of 422" {
		t.Errorf("NON-STRICT R2 should pass with its verdict and note as properties: %+v", r2)
	}
	if r4 := doc.find("protocol", "R4 replay marker"); r4.Failure != nil || r4.prop("verdict") != "INFORMATIONAL" {
		t.Errorf("INFORMATIONAL R4 should pass with its verdict as a property: %+v", r4)
	}
	if p1 := doc.find("protocol", "P1 different payload refused"); p1.Skipped != nil || p1.prop("exercised") != "false" {
		t.Errorf("unexercised P1 should pass with exercised=false: %+v", p1)
	}
}

func TestJUnit_StrictFailsNonStrict(t *testing.T) {
	r := sampleReport()
	r.Strict = true
	doc := parseJUnit(t, r)
	r2 := doc.find("key-reuse", "R2 different payload gets 422")
	if r2.Failure == nil || r2.Failure.Type != "NON-STRICT" {
		t.Fatalf("strict NON-STRICT is not a failure: %+v", r2)
	}
	if doc.Failures != 2 {
		t.Errorf("failures = %d, want 2", doc.Failures)
	}
}

func TestJUnit_IncompleteRunIsAnError(t *testing.T) {
	r := passingReport()
	r.Complete, r.Verdict, r.Interrupted = false, "unknown", "interrupted: signal: interrupt"
	doc := parseJUnit(t, r)
	c := doc.find("idemcheck", "run complete")
	if c.Error == nil || !strings.Contains(c.Error.Message, "signal: interrupt") {
		t.Fatalf("no error case for the interrupted run: %+v", doc)
	}
	if doc.Tests != 3 || doc.Errors != 1 {
		t.Errorf("tests=%d errors=%d, want 3 and 1", doc.Tests, doc.Errors)
	}
}

func TestJUnit_EscapesMarkup(t *testing.T) {
	r := sampleReport()
	r.Violations[0].Explanation = `<b>&"` + "\x00" + `</testcase>`
	doc := parseJUnit(t, r)
	if m1 := doc.find("crash-window", "M1 no double charge"); !strings.Contains(m1.Failure.Text, `<b>&"`) {
		t.Errorf("markup not preserved through escaping: %q", m1.Failure.Text)
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
