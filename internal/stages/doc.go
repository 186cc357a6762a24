// Package stages holds the test that keeps idemcheck's packages in their
// rooms: data flows one way, family → scenario → runner (client → SUT →
// gateway-sim) → history (+ ledger) → checker → verdicts → reports, and
// each stage is a package that hands the next one a value and never
// reaches back. The table in stages_test.go ranks every package of the
// module; a package may import only packages of a lower rank, and a new
// package must be given its rank there. The stages, lowest first:
//
//   - crashwave: the crash-wave table and its timing model; imports
//     nothing of idemcheck, so everything above may read it.
//   - history: the versioned record (ops, faults, charges on one clock).
//   - checker: the pure judge, history in, verdicts out; imports only
//     history and crashwave.
//   - scenarios: scenarios as data (steps, incident files, the regression table).
//   - families: the generators (rapid), one self-registering file each.
//   - ledger: the gateway's event feed, the barrier, and the run-wide
//     account of money (Reconcile, WatchLate).
//   - runner: plays a scenario and records; never judges (it imports no
//     checker: an early stop is a predicate handed in from above).
//   - search: the rapid property, exploration, shrinking, solo replays.
//   - certify: families + environment + checker = a report.
//   - reports: writers of report.json, junit.xml, summary.md, index.html
//     (below certify: they read only history and checker values).
//   - cmd: the command-line programs.
//
// Support packages (target, client, harness, faults, gateway-sim,
// internal) sit below the stages that use them.
package stages
