package reference

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultMaxConns is the pool size when the database URL sets none
// (pool_max_conns).
const DefaultMaxConns = 32

// PoolConfig is the connection pool configuration the server runs with,
// for a database URL. It pings every connection before lending it (pgx
// pings only those idle over a second): a connection the network cut
// while it sat in the pool (a proxy or failover restart) is then replaced
// by a fresh one instead of failing the claim with a 503 once the
// database is back. One round trip per statement is the price
// (BenchmarkReference/replays_unpinged measures it); a false 503 costs a
// client a retry.
func PoolConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return true }
	return cfg, nil
}
