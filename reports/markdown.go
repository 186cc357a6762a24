package reports

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
)

// maxMarkdownViolations caps the violation list: $GITHUB_STEP_SUMMARY
// takes at most 1 MiB and a PR comment 64 KiB, and the first few
// violations say what the next hundred would.
const maxMarkdownViolations = 30

// verdictIcons prefix verdicts in the summary, for a reader scanning a PR.
var verdictIcons = map[string]string{
	"pass": "✅", "fail": "❌", "unknown": "❔",
	"PASS": "✅", "NON-STRICT": "⚠️", "INFORMATIONAL": "ℹ️", "FAILED": "❌", "UNKNOWN": "❔", "not exercised": "➖", "not judged": "➖",
}

// WriteMarkdown writes summary.md, short enough for $GITHUB_STEP_SUMMARY
// or a pull-request comment: the verdict line with the level, the families
// table (family | verdict | scenarios | seed), a table of the checks that
// did not simply PASS, and one line per violation with its replay command
// in backticks. index.html has the rest.
func WriteMarkdown(w io.Writer, r *Report) error {
	r = condensed(r)
	var b strings.Builder
	mdHeader(&b, r)
	mdFamilies(&b, r)
	mdChecks(&b, r)
	mdViolations(&b, r)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write summary.md: %w", err)
	}
	return nil
}

// mdHeader writes the verdict line, the level note, the run's parameters
// and, for an interrupted run, a warning.
func mdHeader(b *strings.Builder, r *Report) {
	verdict := verdictClass(r.Verdict)
	fmt.Fprintf(b, "### %s idemcheck %s: **%s**, level **%s**", verdictIcons[verdict], code(r.Target), VerdictWord(r.Verdict), r.Level)
	if name := checker.LevelName(r.Level); name != "" {
		fmt.Fprintf(b, " (%s)", name)
	}
	b.WriteString("\n\n")
	if r.LevelNote != "" {
		fmt.Fprintf(b, "%s\n\n", oneLine(r.LevelNote))
	}
	if r.Untrusted != "" {
		fmt.Fprintf(b, "**Not to be trusted**: %s (T1).\n\n", oneLine(r.Untrusted))
	}
	fmt.Fprintf(b, "seed %d · budget %s · ran %s · %d replicas", r.Seed, time.Duration(r.Budget), time.Duration(r.Duration).Round(time.Millisecond), r.Replicas)
	if r.Shard != "" {
		fmt.Fprintf(b, " · shard %s", r.Shard)
	}
	if r.Strict {
		b.WriteString(" · strict")
	}
	if r.Tool.Version != "" {
		fmt.Fprintf(b, " · idemcheck %s", r.Tool)
	}
	if g := gatewayText(r.Gateway); g != "" {
		b.WriteString(" · " + g)
	}
	if c := r.Contact; c != nil && c.Trace != "" {
		fmt.Fprintf(b, " · money traced by %s", code(c.Trace))
		if c.TraceFound {
			b.WriteString(" (found at first contact)")
		}
	}
	b.WriteString("\n\n")
	mdContact(b, r.Contact)
	if !r.Complete {
		fmt.Fprintf(b, "> [!WARNING]\n> **Incomplete run**: %s. Checks that passed judged only what was recorded.\n\n", cell(cmp.Or(r.Interrupted, "the run did not complete")))
	}
}

// mdContact writes first contact's checklist when it stopped the run.
func mdContact(b *strings.Builder, c *Contact) {
	if c == nil || !c.Blocked() {
		return
	}
	b.WriteString("> [!CAUTION]\n> **First contact stopped the run**: every check would have judged the misconfiguration, not the server.\n\n```\n")
	c.WriteText(b)
	b.WriteString("```\n\n")
}

// gatewayText is how the run's gateway kept idempotency keys, for the
// run's parameters line: "" when the report does not say.
func gatewayText(g history.Gateway) string {
	switch {
	case g.NoIdempotency:
		return "gateway without idempotency"
	case g.KeyTTL > 0:
		return "gateway keys kept " + g.KeyTTL.String()
	}
	return ""
}

// mdFamilies writes the families table.
func mdFamilies(b *strings.Builder, r *Report) {
	if len(r.Families) == 0 {
		return
	}
	b.WriteString("| family | verdict | scenarios | seed |\n|---|---|---:|---:|\n")
	for _, f := range r.Families {
		seed := "–"
		if f.FailSeed != 0 {
			seed = fmt.Sprint(f.FailSeed)
		}
		g := f.Grade()
		fmt.Fprintf(b, "| %s | %s %s | %d | %s |\n", cell(f.Name), verdictIcons[g], cell(g), f.Scenarios, seed)
	}
	b.WriteString("\n")
}

// mdChecks writes the table of checks that are not a plain PASS, and one
// line naming the checks no history exercised.
func mdChecks(b *strings.Builder, r *Report) {
	var rows []string
	idle := map[string][]string{}
	for _, c := range r.Checks {
		switch g := c.Grade(); g {
		case string(checker.Pass):
		case "not exercised":
			idle[c.Family] = append(idle[c.Family], c.ID)
		default:
			rows = append(rows, fmt.Sprintf("| %s | %s %s | %s %s | %s |", cell(c.Family), c.ID, cell(c.Name), verdictIcons[g], g, cell(c.Note)))
		}
	}
	if len(rows) > 0 {
		b.WriteString("| family | check | verdict | note |\n|---|---|---|---|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n\n")
	}
	var groups []string
	for _, fam := range familyNames(r) {
		if ids := idle[fam]; len(ids) > 0 {
			groups = append(groups, fam+" "+strings.Join(ids, ", "))
		}
	}
	if len(groups) > 0 {
		fmt.Fprintf(b, "Not exercised: %s.\n\n", strings.Join(groups, "; "))
	}
}

// mdViolations writes one line per violation, up to a cap.
func mdViolations(b *strings.Builder, r *Report) {
	if len(r.Violations) == 0 {
		return
	}
	fmt.Fprintf(b, "**Violations** (%d)\n\n", len(r.Violations))
	for i, v := range r.Violations {
		if i == maxMarkdownViolations {
			fmt.Fprintf(b, "- … and %d more: see index.html or report.json\n", len(r.Violations)-i)
			break
		}
		b.WriteString(violationLine(r, v) + "\n")
	}
	b.WriteString("\n")
}

// violationLine is "- **M1** no double charge (family): explanation
// (tenant t, key k, order o) · replay: `command`".
func violationLine(r *Report, v Violation) string {
	line := fmt.Sprintf("- **%s** %s (%s): %s", v.Invariant, checkName(r, v.Family, v.Invariant), v.Family, clip(oneLine(v.Explanation), 300))
	if w := where(v); w != "" {
		line += " (" + w + ")"
	}
	if v.Replay != "" {
		line += " · replay: " + code(v.Replay)
	}
	return line
}

// cell makes s safe inside a Markdown table cell: one line, pipes escaped.
func cell(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

// code renders s as an inline code span, with a fence longer than any run
// of backticks inside it (CommonMark), so a command is copied exactly.
func code(s string) string {
	s = oneLine(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || len(fence) > 1 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
