// Package docker runs a certification environment as Docker containers
// (container mode, `idemcheck certify --docker`): the stores the target
// needs (PostgreSQL, Redis, MariaDB for mysql), the gateway simulator,
// toxiproxy and the server's replicas on private networks (containers.go:
// the replicas share an internal one with toxiproxy alone, never one with
// the gateway's control API or toxiproxy's API), wired through toxiproxy
// exactly as process mode (package harness/process) wires processes. Every image is local: nothing is ever pulled (images/build.sh
// builds them), so it works on an offline CI runner.
//
// Start and the environment:
//   - Start, Launch (a harness.Launcher), Options
//   - Env: Replicas, ReplicaURL, GatewayController, GatewayControlURL,
//     DatabaseURL, Links, LinkAddr, Close
//
// Stores: one container per store (stores.go), its data directory on an
// anonymous volume of the container so that a restart keeps it, ready
// when a real client connects on its published address; every replica
// reaches it through its own replicaN->STORE link, and a MySQL store gets
// a fresh database for the run. RestartStore stops (the server's own
// graceful signal, or SIGKILL) and starts the same container.
//
// Faults:
//   - network, through the toxiproxy container's API: AddToxic,
//     RemoveToxic, SetLinkEnabled (link names as in package harness)
//   - containers, through the Docker API: Kill (SIGKILL), Pause and
//     Resume (cgroup freezer), Restart (the same container started again,
//     same name and network alias)
//
// Clean-up: every container, volume and network carry the label
// idemcheck.run=<id>; Close removes what it tracked and then everything
// with its label, and RemoveAll removes every run's leftovers. Ryuk (the
// testcontainers reaper, itself an image to pull) is never used.
//
// Errors: ErrImageNotFound, ErrNoDocker (both environment errors, exit 3).
//
// It imports harness, target, gateway-sim and the store servers' shared
// configuration (internal/pgcluster, redisserver, mysqlserver); only
// cmd/idemcheck imports
// it.
package docker
