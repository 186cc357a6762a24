package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/target"
	"github.com/idemcheck/idemcheck/internal/pgtest"
)

func TestScratchReference(t *testing.T) {
	tg, err := target.Load("../examples/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tg.Start.Command = "/tmp/idemcheck-ref/reference-server"
	for _, mode := range []string{"throwaway", "shared"} {
		opts := harness.Options{Logger: harnesstest.Logger()}
		if mode == "shared" {
			opts.DatabaseURL = pgtestURL(t)
		}
		start := time.Now()
		env, err := harness.Start(context.Background(), tg, opts)
		if err != nil {
			t.Fatal(err)
		}
		up := time.Since(start)
		st, body := postCharge(t, env.ReplicaURL(1), "k1", "ord_ref")
		start = time.Now()
		env.Close()
		t.Logf("%s: start %s, charge %d %s, close %s", mode, up, st, body, time.Since(start))
	}
}

func pgtestURL(t *testing.T) string { return pgtest.Cluster(t).URL() }
