package redisstore_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/idemcheck/idemcheck/internal/redistest"
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/redisstore"
	"github.com/idemcheck/idemcheck/reference/storetest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// newStore is a store on a logical database of its own.
func newStore(t *testing.T) *redisstore.Store {
	t.Helper()
	opts, err := redisstore.ParseURL(redistest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	if err := client.FlushDB(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	return redisstore.New(client)
}

// The Redis adapter keeps reference.Store's contract (reference/storetest).
func TestStore_Contract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) reference.Store { return newStore(t) })
}
