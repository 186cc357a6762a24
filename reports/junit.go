package reports

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/checker"
)

// The JUnit document, in the dialect every CI test tab reads (GitHub test
// reporters, GitLab, Jenkins): <testsuites> of <testsuite> of <testcase>,
// each case with at most one of <failure>, <error> or <skipped>.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname  string          `xml:"classname,attr"`
	Name       string          `xml:"name,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitProblem   `xml:"failure,omitempty"`
	Error      *junitProblem   `xml:"error,omitempty"`
}

// junitProblem is a <failure>, <error> or <skipped>: a one-line message
// for the test tab's list, the details as text.
type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes junit.xml: one <testsuite> per family, one <testcase
// classname="family" name="ID name"> per check. FAILED is a <failure>
// (type FAILED) carrying every violation's explanation and replay command,
// and so is NON-STRICT under --strict; UNKNOWN is an <error>, because the
// harness could not decide. Only those carry text: a passing case is one
// line, so that a passing certification's junit.xml stays small. A check
// never exercised passes with the property exercised=false (and is listed
// in its suite's not_exercised property), not as <skipped>, since nothing
// was skipped; NON-STRICT and INFORMATIONAL pass with the properties
// verdict and note. A run that did not complete adds a suite "idemcheck"
// whose "run complete" case is an <error>, so that an interrupted run
// never shows green in a CI test tab.
func WriteJUnit(w io.Writer, r *Report) error {
	doc := junitDocument(condensed(r))
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit.xml: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit.xml: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit.xml: %w", err)
	}
	return nil
}

// junitDocument builds the document and sums its counts.
func junitDocument(r *Report) junitSuites {
	doc := junitSuites{Name: "idemcheck " + r.Target, Time: seconds(time.Duration(r.Duration))}
	for _, fam := range familyNames(r) {
		doc.Suites = append(doc.Suites, junitFamily(r, fam))
	}
	if !r.Complete {
		doc.Suites = append(doc.Suites, junitIncomplete(r))
	}
	for _, s := range doc.Suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
	}
	return doc
}

// junitFamily is one family's suite.
func junitFamily(r *Report, fam string) junitSuite {
	s := junitSuite{Name: fam, Time: seconds(0), Properties: junitProperties(r, fam)}
	if !r.Started.IsZero() {
		s.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05")
	}
	if f := family(r, fam); f != nil {
		s.Time = seconds(time.Duration(f.Duration))
	}
	for _, c := range checksOf(r, fam) {
		s.add(junitCheck(r, c))
	}
	return s
}

// add appends a case and counts it.
func (s *junitSuite) add(c junitCase) {
	s.Cases = append(s.Cases, c)
	s.Tests++
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Error != nil:
		s.Errors++
	}
}

// junitProperties are what a CI user needs to reproduce a family.
func junitProperties(r *Report, fam string) []junitProperty {
	props := []junitProperty{{"target", r.Target}, {"seed", fmt.Sprint(r.Seed)}}
	if f := family(r, fam); f != nil {
		props = append(props, junitProperty{"level", f.Level}, junitProperty{"verdict", f.Verdict},
			junitProperty{"scenarios", fmt.Sprint(f.Scenarios)})
		if f.FailSeed != 0 {
			props = append(props, junitProperty{"fail_seed", fmt.Sprint(f.FailSeed)})
		}
	}
	var idle []string
	for _, c := range checksOf(r, fam) {
		if c.Grade() == "not exercised" {
			idle = append(idle, c.ID)
		}
	}
	if len(idle) > 0 {
		props = append(props, junitProperty{"not_exercised", strings.Join(idle, ", ")})
	}
	return props
}

// junitCheck grades one check as a test case.
func junitCheck(r *Report, c Check) junitCase {
	tc := junitCase{Classname: c.Family, Name: c.ID + " " + c.Name, Time: seconds(0)}
	switch {
	case c.Failing(r.Strict):
		tc.Failure = &junitProblem{Message: failureMessage(r, c), Type: c.Verdict, Text: failureText(r, c)}
	case c.Verdict == string(checker.Unknown):
		tc.Error = &junitProblem{Message: oneLine(cmp.Or(c.Note, "could not decide")), Type: c.Verdict, Text: c.Note}
	case c.Grade() == "not exercised":
		tc.Properties = []junitProperty{{"exercised", "false"}}
	case c.Verdict != string(checker.Pass):
		tc.Properties = []junitProperty{{"verdict", c.Verdict}, {"note", oneLine(c.Note)}}
	}
	return tc
}

// failureMessage is the one line a test tab lists: the verdict, the count
// and the first explanation.
func failureMessage(r *Report, c Check) string {
	vs := violationsOf(r, c.Family, c.ID)
	switch len(vs) {
	case 0:
		return clip(oneLine(c.Verdict+": "+cmp.Or(c.Note, c.Name)), 300)
	case 1:
		return clip(oneLine(c.Verdict+": "+vs[0].Explanation), 300)
	}
	return clip(oneLine(fmt.Sprintf("%s: %d violations; first: %s", c.Verdict, len(vs), vs[0].Explanation)), 300)
}

// failureText is the failure's body: each violation with its events and
// the command that replays it, then the check's note.
func failureText(r *Report, c Check) string {
	var b strings.Builder
	for i, v := range violationsOf(r, c.Family, c.ID) {
		fmt.Fprintf(&b, "violation %d: %s\n", i+1, v.Explanation)
		if w := where(v); w != "" {
			fmt.Fprintf(&b, "  %s\n", w)
		}
		if ev := events(v); ev != "" {
			fmt.Fprintf(&b, "  events: %s\n", ev)
		}
		if v.Replay != "" {
			fmt.Fprintf(&b, "  replay: %s\n", v.Replay)
		}
	}
	if c.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", c.Note)
	}
	if f := family(r, c.Family); f != nil && f.FailSeed != 0 {
		fmt.Fprintf(&b, "fail seed: %d\n", f.FailSeed)
	}
	return b.String()
}

// junitIncomplete is the suite that marks an interrupted run.
func junitIncomplete(r *Report) junitSuite {
	why := cmp.Or(r.Interrupted, "the run did not complete")
	s := junitSuite{Name: "idemcheck", Time: seconds(0)}
	s.add(junitCase{Classname: "idemcheck", Name: "run complete", Time: seconds(0),
		Error: &junitProblem{Message: oneLine(why), Type: "INCOMPLETE",
			Text: "The run stopped early: " + why + "\nChecks that passed judged only what was recorded; the verdict is at best unknown.\n"}})
	return s
}

// events lists a violation's evidence: "ops 3, 7; charges ch_1; faults 2".
func events(v Violation) string {
	var parts []string
	if len(v.Ops) > 0 {
		parts = append(parts, "ops "+joinInts(v.Ops))
	}
	if len(v.Charges) > 0 {
		parts = append(parts, "charges "+strings.Join(v.Charges, ", "))
	}
	if len(v.Faults) > 0 {
		parts = append(parts, "faults "+joinInts(v.Faults))
	}
	return strings.Join(parts, "; ")
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// seconds formats d as JUnit wants it: seconds with a decimal point.
func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
