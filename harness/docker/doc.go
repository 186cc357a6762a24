// Package docker runs a certification environment as Docker containers
// (container mode, `idemcheck certify --docker`): PostgreSQL, the gateway
// simulator, toxiproxy and the server's replicas on a private network,
// wired through toxiproxy exactly as process mode (package harness/process)
// wires processes. Every image is local: nothing is ever pulled (images/build.sh
// builds them), so it works on an offline CI runner.
//
// Start and the environment:
//   - Start, Launch (a harness.Launcher), Options
//   - Env: Replicas, ReplicaURL, GatewayController, DatabaseURL, Close
//
// Faults:
//   - network, through the toxiproxy container's API: AddToxic,
//     RemoveToxic, SetLinkEnabled (link names as in package harness)
//   - containers, through the Docker API: Kill (SIGKILL), Pause and
//     Resume (cgroup freezer), Restart (the same container started again,
//     same name and network alias)
//
// Clean-up: every container and the network carry the label
// idemcheck.run=<id>; Close removes what it tracked and then everything
// with its label, and RemoveAll removes every run's leftovers. Ryuk (the
// testcontainers reaper, itself an image to pull) is never used.
//
// Errors: ErrImageNotFound, ErrNoDocker (both environment errors, exit 3).
//
// It imports harness, target and gateway-sim; only cmd/idemcheck imports
// it.
package docker
