package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/idemcheck/idemcheck/reports"
)

// TestCLI_ViolationTimelinesShowTheirOwnEvidence certifies a broken
// server and checks, in the HTML it writes, that every violation's
// timeline, not only the first's, draws the ops and charges its headline
// names: each is drawn over its own example, not the shrunk counterexample.
func TestCLI_ViolationTimelinesShowTheirOwnEvidence(t *testing.T) {
	needPostgres(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, stdout, stderr := idemcheck(t, dir, "run", "concurrent-duplicates", "--target", "naive", "--budget", "10s", "--report-dir", out)
	if code != exitFail {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	rep, err := reports.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, reports.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) < 2 {
		t.Fatalf("%d violations; the test needs more than the counterexample's", len(rep.Violations))
	}
	charge := regexp.MustCompile(`\bch_[A-Za-z0-9]+`)
	for i, v := range rep.Violations {
		ids := idsUnder(doc, fmt.Sprintf("violation-%d", i+1))
		var tl string
		for id := range ids {
			if strings.HasPrefix(id, "timeline-") && !strings.Contains(id, "-op-") && !strings.Contains(id, "-charge-") && !strings.Contains(id, "-serve-") && !strings.Contains(id, "-fault-") && !strings.Contains(id, "-row-") && !strings.HasSuffix(id, "-title") {
				tl = id
			}
		}
		if tl == "" {
			t.Errorf("violation %d (%s) has no timeline", i+1, v.Explanation)
			continue
		}
		for _, op := range v.Ops {
			if !ids[fmt.Sprintf("%s-op-%d", tl, op)] {
				t.Errorf("violation %d names op %d, its timeline %s lacks it: %s", i+1, op, tl, v.Explanation)
			}
		}
		for _, ch := range append(v.Charges, charge.FindAllString(v.Explanation, -1)...) {
			if !ids[tl+"-charge-"+ch] {
				t.Errorf("violation %d names charge %s, its timeline %s lacks it: %s", i+1, ch, tl, v.Explanation)
			}
		}
	}
}

// idsUnder returns the ids of every element under the element with id.
func idsUnder(doc *html.Node, id string) map[string]bool {
	ids := map[string]bool{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || attrOf(n, "id") != id {
			continue
		}
		for d := range n.Descendants() {
			if v := attrOf(d, "id"); v != "" {
				ids[v] = true
			}
		}
	}
	return ids
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
