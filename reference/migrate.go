package reference

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock is the pg_advisory_xact_lock key that serialises migrators:
// replicas starting together queue on it, and each applies only what the
// ones before it did not.
const migrationLock int64 = 0x1de3c4ec_0000_0001

// Migrate applies the embedded schema migrations that the database does not
// have yet, in one transaction under a transaction-level advisory lock, so
// any number of replicas may call it at start-up at the same time: the first
// applies, the rest find nothing to do. A failed migration rolls back whole.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	files, err := migrationFiles()
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS reference_schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("migrate: version table: %w", err)
		}
		for _, m := range files {
			if err := applyMigration(ctx, tx, m); err != nil {
				return err
			}
		}
		return nil
	})
}

type migration struct {
	version int
	name    string
	sql     string
}

func applyMigration(ctx context.Context, tx pgx.Tx, m migration) error {
	var done bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM reference_schema_migrations WHERE version = $1)",
		m.version).Scan(&done); err != nil {
		return fmt.Errorf("migrate %s: %w", m.name, err)
	}
	if done {
		return nil
	}
	if _, err := tx.Exec(ctx, m.sql); err != nil {
		return fmt.Errorf("migrate %s: %w", m.name, err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO reference_schema_migrations (version, name) VALUES ($1, $2)",
		m.version, m.name); err != nil {
		return fmt.Errorf("migrate %s: record: %w", m.name, err)
	}
	return nil
}

// migrationFiles lists migrations/NNNN_name.sql in version order.
func migrationFiles() ([]migration, error) {
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migrate: bad migration file name %q", e.Name())
		}
		b, err := migrations.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}
