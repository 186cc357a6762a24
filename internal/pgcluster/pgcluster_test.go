package pgcluster_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/pgcluster"
	"github.com/jackc/pgx/v5"
)

func TestCluster_StartQueryStopRemovesEverything(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgcluster.Start(ctx, pgcluster.Options{})
	if errors.Is(err, pgcluster.ErrNoBinaries) {
		t.Skip("no PostgreSQL binaries: install postgresql or set PG_BIN")
	}
	if err != nil {
		t.Fatal(err)
	}
	url, err := c.CreateDatabase(ctx, "probe")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT 41 + 1").Scan(&n); err != nil || n != 42 {
		t.Fatalf("query: %d, %v", n, err)
	}
	conn.Close(ctx)
	dir := c.LogPath()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("cluster dir left behind: %v", err)
	}
	if _, err := pgx.Connect(ctx, url); err == nil {
		t.Fatal("server still accepts connections after Stop")
	}
}
