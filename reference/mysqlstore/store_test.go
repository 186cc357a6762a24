package mysqlstore_test

import (
	"context"
	"testing"

	"github.com/idemcheck/idemcheck/internal/mysqltest"
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/mysqlstore"
	"github.com/idemcheck/idemcheck/reference/storetest"
)

func TestMain(m *testing.M) { mysqltest.Main(m) }

// newStore is a store on a fresh, migrated database of its own.
func newStore(t *testing.T) *mysqlstore.Store {
	t.Helper()
	db, err := mysqlstore.Open(mysqltest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := mysqlstore.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return mysqlstore.New(db)
}

// The MySQL adapter keeps reference.Store's contract (reference/storetest).
func TestStore_Contract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) reference.Store { return newStore(t) })
}
