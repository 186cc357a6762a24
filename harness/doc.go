// Package harness is the vocabulary every environment shares: the Env
// contract, Options and Launcher, links and toxics, readiness probing,
// the replica's environment, and the error values. It starts nothing
// itself. The two environments implement Env:
//
//   - harness/process: replicas as child processes, an in-process gateway
//     simulator and toxiproxy, a throwaway PostgreSQL cluster.
//   - harness/docker: the same parts as containers on a private network.
//
// A new way to run a server under test is one new package beside them.
//
//	client ──client->replicaN──▶ replica N ──replicaN->gateway──▶ gateway simulator
//	                                       └─replicaN->postgres─▶ PostgreSQL
//
// # Contract
//
//   - Env: Replicas, ReplicaURL, GatewayController, AddToxic,
//     RemoveToxic, SetLinkEnabled, Kill, Pause, Resume, Restart,
//     RestartStore, Relaunch, Close. Pick looks a replica up for either
//     implementation.
//   - Launch: what Relaunch changes in a replica (a clock offset delivered
//     as FAKETIME and libfaketime, a database session time zone in its
//     store URLs); FakeTime, UTCOffset, LibFakeTime, HostLibFakeTime.
//   - Options, Launcher, Prepare (validate the target, apply overrides),
//     NewAPIKey, ReplicaEnv and StandardVars (what a replica is given).
//
// # Links (toxiproxy)
//
//   - Link ("client->replica0", "replica0->gateway", "replica0->postgres"),
//     ClientLink, GatewayLink, PostgresLink, ParseLink; Direction
//     (Upstream = requests, Downstream = responses); Toxic.
//
// # Readiness
//
//   - Probe: one GET that must answer 2xx.
//
// # Errors
//
//   - ErrClosed, ErrNoReplica, ErrUnknownLink, ErrNotRunning, ErrNotReady
//     (with the log tail), ErrDatabaseURL, ErrInterrupted.
//
// Injecting and recording faults is package faults' job; this package
// and its implementations record nothing.
//
// It imports only target and gateway-sim (the gateway's Config and
// Controller); harness/process, harness/docker, faults, scenarios, certify
// and cmd/idemcheck import it.
package harness
