package docker_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/docker"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
)

// The reference server reads FAKETIME itself (libfaketime cannot reach a
// Go binary), so a relaunched container with a skewed clock dates its
// answers by it, and a relaunch with the zero Launch restores the clock.
func TestDocker_RelaunchMovesTheReplicasClock(t *testing.T) {
	requireImages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env, err := docker.Start(ctx, builtinTarget(t, "reference"), harness.Options{Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	url := env.ReplicaURL(0) + "/healthz"
	if err := env.Relaunch(ctx, 0, func(l *harness.Launch) { l.Clock = -30 * time.Second }); err != nil {
		t.Fatal(err)
	}
	if off := harnesstest.DateOffset(t, url); off < -31*time.Second || off > -29*time.Second {
		t.Errorf("Date offset after a -30s relaunch: %s", off)
	}
	if err := env.Relaunch(ctx, 0, func(l *harness.Launch) { l.Clock = 0 }); err != nil {
		t.Fatal(err)
	}
	if off := harnesstest.DateOffset(t, url); off < -time.Second || off > time.Second {
		t.Errorf("Date offset after healing: %s", off)
	}
}
