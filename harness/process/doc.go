// Package process is the process-mode environment (harness.Env): a
// throwaway PostgreSQL cluster (or a fresh database on a server you name),
// the gateway simulator in-process on a loopback port, an embedded
// toxiproxy with a proxy on every link, and the server's replicas as child
// processes in their own process groups, each ready-checked.
//
// # Lifecycle
//
//   - Start(ctx, target, harness.Options) (*Env, error); Launch is the
//     same as a harness.Launcher. A failed (or panicking) Start tears down
//     what it started.
//   - Env.Close: idempotent teardown in dependency order; nothing is left
//     (no process, no port, no temp dir).
//   - CloseOnSignal(ctx, env): SIGINT/SIGTERM tear the Env down and cancel
//     the context with cause harness.ErrInterrupted.
//   - Env.Resources: what the Env holds (pids, ports, dirs), to prove a
//     teardown complete.
//
// # Beyond harness.Env
//
//   - Gateway() (the *gatewaysim.Sim), GatewayURL(), GatewayAPIKey(),
//     DatabaseURL(): direct views for the harness and tests, never
//     through a link.
//   - ReplicaAddr(i), LogPath(i), WorkDir(), Target(), Logger(),
//     LinkAddr, Proxy, Running(i), PID(i).
//
// A replica inherits idemcheck's environment minus the standard variables
// (harness.StandardVars), then gets harness.ReplicaEnv; its working
// directory is idemcheck's, unless the target sets start.dir.
//
// It imports harness, target, gateway-sim and internal/freeport,
// internal/leftovers, internal/pgcluster; certify and harness/harnesstest
// import it.
package process
