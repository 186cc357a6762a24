// Package scenarios holds scenarios as data: a Scenario is a list of
// steps (sends, waits, faults, heals, kills, restarts), written by a
// family's generator or loaded from an incident file, and replayed the
// same way either way. Incident files under scenarios/incidents/ are the
// regression table (Incidents; LoadIncident and ParseIncident read one,
// Validate refuses a bad one with file:line and the field): our own, and
// under public/ the catalogue of public incidents, each citing its thread
// (Source, Also) and naming the built-in member that has its mechanism
// (Member).
//
// It imports only history's vocabulary (through faults and checker: the
// fault kinds and check ids an incident file may name) and the table of
// built-in members (builtin) an incident may name; the stages that
// generate, run and judge scenarios import it, never the other way round
// (internal/stages keeps that).
package scenarios
