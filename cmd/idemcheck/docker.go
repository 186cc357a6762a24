package main

import (
	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/docker"
	"github.com/idemcheck/idemcheck/target"
)

// dockerLauncher is the environment of `certify --docker` and of a target
// file that names an image: PostgreSQL, the gateway simulator, toxiproxy
// and the replicas as containers on a private network (package harness/docker).
// A missing image fails the run with exit 3 ("run make images"); nothing
// is ever pulled.
func dockerLauncher() harness.Launcher { return docker.Launch }

// inDocker says whether a run goes to containers: asked for with --docker,
// or implied by a target that has an image: and no command to run.
func inDocker(flag bool, tg *target.Target) bool {
	return flag || (tg.Image != "" && tg.Start.Command == "")
}
