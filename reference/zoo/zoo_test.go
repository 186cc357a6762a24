package zoo_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/pgtest"
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/redisstore"
	"github.com/idemcheck/idemcheck/reference/zoo"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Replicas of sweeper-recharges start together on one fresh database and
// every one starts: its outbox table once failed a replica with 42P07,
// "relation already exists", in 1 of 10 self-validation seeds.
func TestSweeperRecharges_ReplicasStartTogether(t *testing.T) {
	v, err := zoo.Lookup("sweeper-recharges")
	if err != nil {
		t.Fatal(err)
	}
	url := pgtest.URL(t)
	const replicas = 8
	pools := make([]*pgxpool.Pool, replicas)
	for i := range pools {
		if pools[i], err = pgxpool.New(context.Background(), url); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pools[i].Close)
	}
	if err := reference.Migrate(context.Background(), pools[0]); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, replicas)
	for _, pool := range pools {
		wg.Go(func() {
			_, err := v.New(reference.Config{Pool: pool, Gateway: reference.NewGateway("http://127.0.0.1:1", "sk_test", time.Second),
				SweepInterval: -1, Logger: slog.New(slog.DiscardHandler)})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("replica start: %v", err)
		}
	}
}

// A member built on Redis refuses to start on another store rather than
// run as a different server under its name.
func TestRedisMembers_RefuseAnotherStore(t *testing.T) {
	for _, name := range []string{"redis-get-set", "redis-short-lock", "redis-last-writer-wins", "redis-read-back-lock", "redis-setex-claim"} {
		v, err := zoo.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.New(reference.Config{Store: reference.NewPostgresStore(nil),
			Gateway: reference.NewGateway("http://127.0.0.1:1", "sk_test", time.Second), Logger: slog.New(slog.DiscardHandler)})
		if !errors.Is(err, redisstore.ErrNotRedis) {
			t.Errorf("%s on PostgreSQL: %v, want ErrNotRedis", name, err)
		}
	}
}
