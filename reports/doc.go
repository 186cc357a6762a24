// Package reports writes what a certification run found, for the three
// people who read it: a payments engineer in a browser, a CI job's test
// tab, and a reviewer skimming a pull request. Every writer is a pure
// function of a *Report (and the counterexample histories it carries), so
// a report can be redrawn from report.json at any time and an interrupted
// run still gets every file, marked incomplete.
//
// It imports only history and checker. certify builds a Report and
// cmd/idemcheck writes, reads and merges them; reports imports neither,
// nor the runner (scenarios).
//
// # Schema
//
// Report, FamilyResult, Check, Violation, Tool and Duration are the
// report.json schema; SchemaVersion is its version. Check.Grade and
// Check.Failing are how every writer grades a check; checker.LevelName
// names a certification level. Tool is the idemcheck build that wrote a report:
// CurrentTool reads the running binary's (ToolOf its build information),
// and `idemcheck version` prints the same.
//
// # Writing
//
//   - WriteAll writes the whole report directory and returns its Paths:
//     report.json (JSONFile), junit.xml (JUnitFile), summary.md
//     (MarkdownFile), index.html (HTMLFile) and history-<family>.json
//     (HistoryFile) for each counterexample.
//   - WriteJSON writes report.json.
//   - WriteJUnit writes junit.xml: a <testsuite> per family, a <testcase>
//     per check, FAILED as <failure>, UNKNOWN as <error>, not exercised as
//     a property (never <skipped>).
//   - WriteMarkdown writes summary.md for $GITHUB_STEP_SUMMARY or a PR
//     comment.
//   - WriteHTML writes index.html: self-contained, no network.
//   - TimelineSVG draws one violation over its history as inline SVG; the
//     HTML report embeds one per violation.
//
// # Reading
//
//   - ReadJSON decodes report.json, refusing an unknown schema version
//     (ErrSchemaVersion).
//   - ReadDir loads a report directory, histories included, so its HTML can
//     be redrawn or shard reports merged.
//
// # Merging
//
//   - Merge combines shard reports of one target; OverallVerdict is the
//     run's verdict, the same rule for one run and a merge; CondenseNote
//     folds a merged check's notes into one sentence per kind.
package reports
