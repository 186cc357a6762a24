// Package harness runs a system under test inside an environment the
// harness controls: PostgreSQL, the gateway simulator, an embedded
// toxiproxy with a proxy on every link, and the server's replicas as child
// processes. It is a Go API with no *testing.T, used by the CLI, the
// scenarios and the tests alike (harness/harnesstest adds test fixtures).
//
//	client ──client->replicaN──▶ replica N ──replicaN->gateway──▶ gateway simulator
//	                                       └─replicaN->postgres─▶ PostgreSQL
//
// # Lifecycle
//
//   - Start(ctx, target, Options) (*Env, error): database (throwaway
//     cluster, or a fresh database on Options.DatabaseURL's server), the
//     gateway on a loopback port, toxiproxy, three proxies per replica,
//     then every replica in parallel, each ready-checked. A failed (or
//     panicking) Start tears down what it started.
//   - Env.Close: idempotent teardown in dependency order; nothing is left
//     (no process, no port, no temp dir). Callers `defer env.Close()`.
//   - CloseOnSignal(ctx, env): SIGINT/SIGTERM tear the Env down and cancel
//     the context with cause ErrInterrupted. Replicas and PostgreSQL run in
//     their own process groups, so a Ctrl-C reaches only the harness: a
//     CLI must use this, or its children outlive it.
//   - Env.Resources: what the Env holds (pids, ports, dirs), to prove a
//     teardown complete.
//
// # Addresses and inspection
//
//   - ReplicaURL(i), ReplicaURLs: client-facing, through client->replicaN.
//   - ReplicaAddr(i): the replica's own address, the same across restarts.
//   - Gateway(), GatewayURL(), GatewayAPIKey(), DatabaseURL(): the
//     harness's direct views (never through a link).
//   - Recorder(), SyncLedger(ctx): the gateway's charges and declines are
//     copied into the Recorder as they happen; SyncLedger waits for the
//     copy to catch up before a Snapshot.
//   - LogPath(i), WorkDir(), Target(), Logger(), Replicas(), Links().
//
// # Links (toxiproxy)
//
//   - Link ("client->replica0", "replica0->gateway", "replica0->postgres"),
//     ClientLink, GatewayLink, PostgresLink, ParseLink; Direction
//     (Upstream = requests, Downstream = responses).
//   - AddToxic(link, Toxic), RemoveToxic, SetLinkEnabled (down/up),
//     LinkAddr, Proxy (the raw *toxiproxy.Proxy).
//
// # Processes
//
//   - Kill(i) SIGKILL, Pause(i) SIGSTOP, Resume(i) SIGCONT, Restart(ctx, i):
//     real signals to the replica's process group; Restart relaunches on
//     the same address and waits for readiness. Running(i), PID(i).
//
// # Errors
//
//   - ErrClosed, ErrNoReplica, ErrUnknownLink, ErrNotRunning, ErrNotReady
//     (with the log tail), ErrDatabaseURL, ErrInterrupted.
//
// Recording faults is package faults' job; this package records only the
// gateway's ledger.
package harness
