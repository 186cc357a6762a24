// Package target holds what idemcheck knows of a server under test: how
// to start a replica (Start, Ready, Render with Vars, or Image in container
// mode), how it speaks the charge protocol (Protocol, Fields, FieldPath),
// the shape of its charge requests (Protocol.Request writes one for a
// Payment: the path's placeholders, the Body template in its encoding,
// plainly or as a Writing says; Writings and Body.StaticFields are what
// key-reuse varies), what it promises (Policy, CrashWindowFits) and which
// payment provider it charges through (Gateway: a gateway simulator profile). Load and Parse read a
// target file strictly (errors name file:line and the field); Validate and
// Refuse check a target built in code.
//
// It imports only history (Policy is history.Policy, kept in every
// history) and internal/yamlfile. Everything that runs or judges a target
// imports it: builtin, client, harness, scenarios, certify, cmd/idemcheck.
package target
