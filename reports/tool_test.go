package reports_test

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/idemcheck/idemcheck/reports"
)

// TestToolOf_ReadsTheVCSStamp: a build in a checkout names its version,
// commit, commit time and whether the tree was modified.
func TestToolOf_ReadsTheVCSStamp(t *testing.T) {
	info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/idemcheck/idemcheck", Version: "v0.0.0-20261203101112-13e509f18cb7+dirty"},
		Settings: []debug.BuildSetting{{Key: "-buildmode", Value: "exe"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "13e509f18cb7c9d6aceff94dab74eb156fb35212"},
			{Key: "vcs.time", Value: "2026-12-03T10:11:12Z"}, {Key: "vcs.modified", Value: "true"}}}
	got := reports.ToolOf(info)
	want := reports.Tool{Version: "v0.0.0-20261203101112-13e509f18cb7+dirty", Commit: "13e509f18cb7c9d6aceff94dab74eb156fb35212",
		Modified: true, CommitTime: "2026-12-03T10:11:12Z"}
	if got != want {
		t.Fatalf("ToolOf = %+v, want %+v", got, want)
	}
	if s := got.String(); s != "v0.0.0-20261203101112-13e509f18cb7+dirty (commit 13e509f18cb7, modified)" {
		t.Errorf("String = %q", s)
	}
}

// TestToolOf_UnknownWithoutVCS: a build outside a checkout says unknown
// in words, never an empty string or Go's "(devel)".
func TestToolOf_UnknownWithoutVCS(t *testing.T) {
	for _, info := range []*debug.BuildInfo{nil, {Main: debug.Module{Version: "(devel)"}}} {
		got := reports.ToolOf(info)
		want := reports.Tool{Version: "unknown", Commit: "unknown", CommitTime: "unknown"}
		if got != want || got.String() != "unknown" || got.ShortCommit() != "unknown" {
			t.Errorf("ToolOf(%v) = %+v (%q), want %+v", info, got, got, want)
		}
	}
}

// TestTool_InEveryReport: report.json carries the tool object, and the
// summary and the HTML page name the build.
func TestTool_InEveryReport(t *testing.T) {
	r := sampleReport()
	var js, md, html bytes.Buffer
	if err := reports.WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][2]string{
		"report.json": {js.String(), `"tool": {
    "version": "v0.0.0-20260314092653-13e509f18cb7+dirty",
    "commit": "13e509f18cb7c9d6aceff94dab74eb156fb35212",
    "modified": true,
    "commit_time": "2026-03-14T09:26:53Z"
  }`},
		"summary.md": {md.String(), "· idemcheck v0.0.0-20260314092653-13e509f18cb7+dirty (commit 13e509f18cb7, modified)"},
		"index.html": {html.String(), "<th>idemcheck</th><td>v0.0.0-20260314092653-13e509f18cb7&#43;dirty (commit 13e509f18cb7, modified)</td>"},
	} {
		if !strings.Contains(want[0], want[1]) {
			t.Errorf("%s lacks %s", name, want[1])
		}
	}
}
