package process_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/harnesstest"
	"github.com/idemcheck/idemcheck/harness/process"
	"github.com/idemcheck/idemcheck/internal/redistest"
)

// TestEnv_StoresBehindTheirOwnLinks: a target that needs all three stores
// gets each behind a replicaN->store link; a write through one link
// survives a graceful store restart, a link taken down cuts only that
// store, and Close leaves no store process, port or folder behind.
func TestEnv_StoresBehindTheirOwnLinks(t *testing.T) {
	tgt := harnesstest.Target(t, true, map[string]string{"R": "{{.RedisURL}}", "M": "{{.MySQLDSN}}", "MU": "{{.MySQLURL}}"})
	tgt.Needs = []string{"mysql", "redis", "postgres"}
	tgt.Replicas = 1
	env, err := process.Start(context.Background(), tgt, harness.Options{Logger: harnesstest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	want := []harness.Link{"client->replica0", "replica0->gateway", "replica0->postgres", "replica0->redis", "replica0->mysql"}
	if got := env.Links(); !slices.Equal(got, want) {
		t.Fatalf("links %v, want %v", got, want)
	}
	redis := env.LinkAddr("replica0->redis")
	if got, err := redistest.Do(redis, "SET", "k", "v"); got != "+OK" {
		t.Fatalf("SET through the link: %q %v", got, err)
	}
	if err := env.RestartStore(context.Background(), "redis", false); err != nil {
		t.Fatal(err)
	}
	if got, err := redistest.Do(redis, "GET", "k"); got != "v" {
		t.Fatalf("GET after a graceful restart: %q %v", got, err)
	}
	if err := env.SetLinkEnabled("replica0->redis", false); err != nil {
		t.Fatal(err)
	}
	if _, err := redistest.Do(redis, "PING"); err == nil {
		t.Fatal("PING through a link that is down succeeded")
	}
	mysqlPing(t, env.LinkAddr("replica0->mysql"))
	if err := env.RestartStore(context.Background(), "mysql", true); err != nil {
		t.Fatal(err)
	}
	mysqlPing(t, env.LinkAddr("replica0->mysql"))
	if err := env.RestartStore(context.Background(), "mongo", false); !errors.Is(err, harness.ErrNoStore) {
		t.Fatalf("restart of a store the target lacks: %v", err)
	}
	res := env.Resources()
	if len(res.PIDs) != 4 || len(res.Dirs) != 4 {
		t.Fatalf("resources %+v, want a replica and three stores, 3 store dirs and the work dir", res)
	}
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	resourcesGone(t, res)
}

func mysqlPing(t *testing.T, addr string) {
	t.Helper()
	db, err := sql.Open("mysql", "root@tcp("+addr+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("mysql through %s: %v", addr, err)
	}
}
