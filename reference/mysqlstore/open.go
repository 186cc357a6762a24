package mysqlstore

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-sql-driver/mysql"
)

// DefaultMaxConns is the pool size, as the PostgreSQL store's.
const DefaultMaxConns = 32

// lockWait is the session's innodb_lock_wait_timeout unless the DSN sets
// one: a statement waiting on a row lock longer than this is refused
// (1205) and retried (retry.go), well inside a request's max wait,
// instead of waiting InnoDB's default 50 seconds.
const lockWait = "5"

// Config reads a go-sql-driver DSN (user:pass@tcp(host:port)/db?…) into
// the configuration the store runs with, whatever the DSN says about
// these: times in UTC, parsed, and truncated to the microsecond that
// DATETIME(6) keeps (MariaDB would truncate, MySQL round: either way a
// lease compared in the database would differ from the caller's);
// affected rows counting rows changed, not found (Claim's insert-if-absent
// reads it); connections checked for liveness before reuse, so a pool
// that outlived a database restart reconnects; a dial timeout.
func Config(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.Loc, cfg.ParseTime, cfg.ClientFoundRows, cfg.CheckConnLiveness = time.UTC, true, false, true
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if _, ok := cfg.Params["innodb_lock_wait_timeout"]; !ok {
		cfg.Params["innodb_lock_wait_timeout"] = lockWait
	}
	if err := cfg.Apply(mysql.TimeTruncate(time.Microsecond)); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Open opens a pool on the DSN, configured by Config, the driver's own
// messages (a dead connection closed) going to log as warnings (nil:
// discarded), so a server's log stays one format. It does not connect;
// Migrate (or Ping) does.
func Open(dsn string, log *slog.Logger) (*sql.DB, error) {
	cfg, err := Config(dsn)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.Logger = driverLog{log}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(DefaultMaxConns)
	db.SetMaxIdleConns(DefaultMaxConns)
	db.SetConnMaxLifetime(5 * time.Minute)
	return db, nil
}

//go:embed schema.sql
var schema string

// migrateLock names the GET_LOCK that serialises replicas migrating at
// once (MySQL's DDL is not transactional, so a transaction cannot).
const migrateLock = "idemcheck_reference_migrate"

// Migrate creates the table if it does not exist, under a named lock, so
// any number of replicas may call it at start-up at the same time.
func Migrate(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 30)", migrateLock).Scan(&got); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	if got.Int64 != 1 {
		return fmt.Errorf("migrate: lock %s not granted within 30s", migrateLock)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK(?)", migrateLock)
	if _, err := conn.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// driverLog is a go-sql-driver logger writing to slog.
type driverLog struct{ log *slog.Logger }

func (l driverLog) Print(v ...any) { l.log.Warn(fmt.Sprint(v...), "store", "mysql") }
