package docker_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/harness/docker"
	"github.com/idemcheck/idemcheck/internal/redistest"
)

// replicaEnv is the environment of replica 0's container, by name.
func replicaEnv(t *testing.T, env *docker.Env) map[string]string {
	t.Helper()
	out, err := exec.Command("docker", "inspect", "-f", "{{json .Config.Env}}", "idemcheck-"+env.RunID()+"-replica0").Output()
	if err != nil {
		t.Fatalf("docker inspect replica0: %v", err)
	}
	var kvs []string
	if err := json.Unmarshal(out, &kvs); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// mysqlThrough opens the replica's database (named in its DSN) through
// addr, the host side of its link.
func mysqlThrough(t *testing.T, dsn, addr string) *sql.DB {
	t.Helper()
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("MYSQL_DSN %q: %v", dsn, err)
	}
	c.Addr = addr
	db, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// pgCount runs stmts, then query, on a fresh connection to url and
// returns the query's count.
func pgCount(t *testing.T, url, query string, stmts ...string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var n int
	if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestDocker_StoresBehindTheirOwnLinks: a target that needs all three
// stores gets each as a container behind a replicaN->store link, with the
// replica's variables pointing at the link and a fresh MySQL database;
// what was written survives a graceful restart (redis, postgres, whose
// published port may change) and a crash (mysql, committed rows); a link
// taken down cuts its store; Close leaves no container, volume or network.
func TestDocker_StoresBehindTheirOwnLinks(t *testing.T) {
	requireImages(t)
	ctx := context.Background()
	tg := builtinTarget(t, "reference")
	tg.Needs = []string{"mysql", "redis", "postgres"}
	env, err := docker.Start(ctx, tg, harness.Options{Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	vars := replicaEnv(t, env)
	if got := vars["REDIS_URL"]; got != "redis://toxiproxy:20300/0" {
		t.Errorf("REDIS_URL %q, want replica0's redis link", got)
	}
	if got := vars["DATABASE_URL"]; !strings.Contains(got, "@toxiproxy:20200/") {
		t.Errorf("DATABASE_URL %q, want replica0's postgres link", got)
	}
	dsn := vars["MYSQL_DSN"]
	if !strings.HasPrefix(dsn, "root@tcp(toxiproxy:20400)/idemcheck_") || !strings.HasPrefix(vars["MYSQL_URL"], "mysql://root@toxiproxy:20400/idemcheck_") {
		t.Errorf("MYSQL_DSN %q, MYSQL_URL %q: want replica0's mysql link and the run's database", dsn, vars["MYSQL_URL"])
	}
	links := []harness.Link{"client->replica0", "replica0->gateway", "replica0->postgres", "replica0->redis", "replica0->mysql"}
	if got := env.Links(); !slices.Equal(got, links) {
		t.Fatalf("links %v, want %v", got, links)
	}

	redis := env.LinkAddr("replica0->redis")
	if got, err := redistest.Do(redis, "SET", "k", "v"); got != "+OK" {
		t.Fatalf("SET through the link: %q %v", got, err)
	}
	if err := env.RestartStore(ctx, "redis", false); err != nil {
		t.Fatal(err)
	}
	if got, err := redistest.Do(redis, "GET", "k"); got != "v" {
		t.Fatalf("GET after a graceful restart: %q %v", got, err)
	}

	kept := "SELECT count(*) FROM pg_tables WHERE tablename = 'kept'"
	if n := pgCount(t, env.DatabaseURL(), kept, "CREATE TABLE kept (k int)"); n != 1 {
		t.Fatalf("created a table, found %d", n)
	}
	if err := env.RestartStore(ctx, "postgres", false); err != nil {
		t.Fatal(err)
	}
	if n := pgCount(t, env.DatabaseURL(), kept); n != 1 {
		t.Fatalf("table created before a graceful postgres restart: %d after it", n)
	}

	db := mysqlThrough(t, dsn, env.LinkAddr("replica0->mysql"))
	for _, q := range []string{"CREATE TABLE t (k VARCHAR(64) PRIMARY KEY) ENGINE=InnoDB", "INSERT INTO t VALUES ('a')"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s through the link: %v", q, err)
		}
	}
	if err := env.RestartStore(ctx, "mysql", true); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after a mysql crash: %d committed rows, %v; want 1", n, err)
	}

	if err := env.SetLinkEnabled("replica0->redis", false); err != nil {
		t.Fatal(err)
	}
	if got, err := redistest.Do(redis, "PING"); err == nil {
		t.Fatalf("PING through a link that is down answered %q", got)
	}
	if err := env.RestartStore(ctx, "mongo", false); !errors.Is(err, harness.ErrNoStore) {
		t.Fatalf("restart of a store the target lacks: %v", err)
	}
	closeLeavesNothing(t, env)
}
