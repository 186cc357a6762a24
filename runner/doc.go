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
// A Runner is made by New from a Config that nothing changes afterwards;
// what its examples share while they play (the ledger, the examples in
// flight and the faults they share, the cut counts) is its run state,
// each field naming its lock. Its files, by concern:
//
//   - runner.go: Config, New, Run, the run state and the cut counts
//   - execution.go: one example's state, each field naming who writes it
//   - requests.go: sends, through the gate, with the example's keys and orders
//   - steps.go, plan.go: steps and faults (a fault built before the first
//     step, healed in cleanup), the labels of what a fault strikes
//   - converge.go: converging retries and their deadlines
//   - wait.go, record.go, trace.go: waits, evidence from the ledger,
//     amounts under an amount trace
//   - gate.go, live.go: the gate, and the faults shared by the examples
//     in flight
//
// It imports scenarios, ledger, client, faults and harness; never the
// checker, the families or the search (internal/stages keeps that).
package runner
