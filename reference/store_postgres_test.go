package reference_test

import (
	"context"
	"testing"

	"github.com/idemcheck/idemcheck/internal/pgtest"
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/storetest"
)

// The PostgreSQL adapter keeps reference.Store's contract
// (reference/storetest), each case on a database of its own.
func TestPostgresStore_Contract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) reference.Store {
		pool := openPool(t, pgtest.URL(t))
		if err := reference.Migrate(context.Background(), pool); err != nil {
			t.Fatalf("migrate: %v", err)
		}
		return reference.NewPostgresStore(pool)
	})
}
