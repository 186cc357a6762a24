package reports

import (
	"slices"
	"strings"

	"github.com/idemcheck/idemcheck/checker"
)

// Grade is how a report renders one check: the verdict when the check was
// exercised, "not exercised" when the history never asked its question (a
// PASS that certifies nothing). Every writer grades through it, so the
// JUnit tab, the Markdown summary and the HTML table never disagree.
func (c Check) Grade() string {
	if !c.Exercised && c.Verdict == string(checker.Pass) {
		return "not exercised"
	}
	return c.Verdict
}

// Failing reports whether the check fails the run under strict: FAILED
// always, NON-STRICT only with --strict (docs/protocol.md §7).
func (c Check) Failing(strict bool) bool {
	return c.Verdict == string(checker.Failed) || strict && c.Verdict == string(checker.NonStrict)
}

// gradeClass is the CSS class of a grade: pass, non-strict, informational,
// failed, unknown or not-exercised (also for a family not judged). A verdict nobody knows grades unknown.
func gradeClass(grade string) string {
	switch grade {
	case string(checker.Pass), string(checker.NonStrict), string(checker.Informational),
		string(checker.Failed), string(checker.Unknown), "not exercised":
		return strings.ReplaceAll(strings.ToLower(grade), " ", "-")
	case "not judged":
		return "not-exercised" // drawn alike: a PASS that certifies nothing
	}
	return "unknown"
}

// VerdictWord is how a run's verdict ("pass", "fail", "unknown") reads
// everywhere a person sees it: PASS, FAILED, UNKNOWN, the same words as a
// check's verdicts, so that a summary, a badge and a terminal never say
// FAIL where the checks table says FAILED.
func VerdictWord(v string) string {
	switch verdictClass(v) {
	case "pass":
		return string(checker.Pass)
	case "fail":
		return string(checker.Failed)
	}
	return string(checker.Unknown)
}

// verdictClass is the CSS class of the run's verdict badge: pass, fail or
// unknown; anything else is unknown, never success.
func verdictClass(v string) string {
	switch v {
	case "pass", "fail":
		return v
	}
	return "unknown"
}

// familyNames lists families in report order: r.Families first, then any
// family that only a check or a violation names (an interrupted run may
// have checks of a family it never finished).
func familyNames(r *Report) []string {
	var names []string
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, f := range r.Families {
		add(f.Name)
	}
	for _, c := range r.Checks {
		add(c.Family)
	}
	for _, v := range r.Violations {
		add(v.Family)
	}
	return names
}

// checksOf returns the checks of one family, in report order.
func checksOf(r *Report, family string) []Check {
	var out []Check
	for _, c := range r.Checks {
		if c.Family == family {
			out = append(out, c)
		}
	}
	return out
}

// violationsOf returns the violations of check id in family.
func violationsOf(r *Report, family, id string) []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if v.Family == family && v.Invariant == id {
			out = append(out, v)
		}
	}
	return out
}

// checkName finds the name of check id in family, or any family.
func checkName(r *Report, family, id string) string {
	name := ""
	for _, c := range r.Checks {
		if c.ID != id {
			continue
		}
		if c.Family == family {
			return c.Name
		}
		name = c.Name
	}
	return name
}

// family returns the family result named name, or nil.
func family(r *Report, name string) *FamilyResult {
	for i := range r.Families {
		if r.Families[i].Name == name {
			return &r.Families[i]
		}
	}
	return nil
}

// where describes a violation's subject: "tenant t, key k, order o".
func where(v Violation) string {
	var parts []string
	for _, p := range [][2]string{{"tenant", v.Tenant}, {"key", v.Key}, {"order", v.Order}} {
		if p[1] != "" {
			parts = append(parts, p[0]+" "+p[1])
		}
	}
	return strings.Join(parts, ", ")
}

// oneLine folds whitespace runs, newlines included, into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip shortens s to at most n runes, marking the cut with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// slug turns a family name into a safe file and id component: lower-case
// letters, digits and dashes only.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if ok {
			b.WriteRune(c)
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = !ok
	}
	out := strings.TrimSuffix(b.String(), "-")
	if out == "" {
		return "x"
	}
	return out
}
