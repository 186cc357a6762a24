package reference

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultMaxConns is the pool size when the database URL sets none
// (pool_max_conns).
const DefaultMaxConns = 32

// PoolConfig is the connection pool configuration the server runs with,
// for a database URL. A connection is pinged before it is lent only where
// it may be stale: idle over a second (pgx's own rule), or its socket not
// quiet, that is the peer closed it or sent something unasked (a proxy or
// failover restart cut it while it sat in the pool; PostgreSQL's
// termination notice). Such a connection is replaced by a fresh one
// instead of failing the claim with a 503 once the database is back. The
// look is a non-blocking peek at the socket, no round trip; a ping before
// every lend cost one round trip per statement
// (BenchmarkReference/replays_pinged measures it).
func PoolConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	cfg.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool {
		return p.IdleDuration > staleAfter || !quiet(p.Conn.PgConn().Conn())
	}
	return cfg, nil
}

// staleAfter is how long a connection may sit idle in the pool before it
// is pinged however quiet its socket: pgx's default.
const staleAfter = time.Second
