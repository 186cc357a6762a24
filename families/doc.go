// Package families holds the property-based generators: a Family draws
// one scenario from rapid's choices, every Draw labelled, so a shrunk
// counterexample reads as the choices that matter. Each family is one
// file that registers itself in its init (register), with its rank in
// the table, its level, and how long one example takes (MinTime); the
// crash wave (crash_window.go) and late-retry's probes (late_retry.go)
// carry their own timing models. mixed is Composite: it draws from the
// others and is certified only when named.
//
// To add a family: one file with its generator and an init that calls
// register.
//
// It imports scenarios (the data it produces), target (the policy it
// draws against) and history (the crash-wave table); never the runner,
// the search or the checker.
package families
