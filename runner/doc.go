// Package runner plays scenarios against one environment and records
// what happened: every request as invoke/ok/fail/info, every fault when
// it fired (a gateway rule when the feed says it fired), every charge
// from the ledger, on one clock. Run returns the history and never
// changes it afterwards.
//
// Examples run at once share the environment: the Gate keeps one
// example's disruption away from the others' requests, and live.go
// records an environment-wide fault in every example in flight. The
// runner never judges; an early stop (a late-retry example that already
// holds a double charge) is a predicate handed in (Runner.StopEarly).
//
// It imports scenarios, ledger, client, faults and harness; never the
// checker, the families or the search (internal/stages keeps that).
package runner
