package mysqlstore_test

import (
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/mysqltest"
	"github.com/idemcheck/idemcheck/reference/storetest"
)

// A claim committed before the database crashes is there after it
// restarts, and the pool that outlived the crash serves the next write at
// once: its dead connections are replaced, not lent out.
func TestStore_SurvivesADatabaseCrash(t *testing.T) {
	s := newStore(t)
	c := storetest.NewClaim("owner", time.Now(), time.Minute)
	storetest.MustClaim(t, s, c)
	if err := s.Ping(t.Context()); err != nil { // a pooled connection to outlive the crash
		t.Fatal(err)
	}
	server := mysqltest.Server(t)
	if err := server.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := server.Launch(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Finish(t.Context(), c.Tenant, c.KeyHash, c.RequestID, storetest.Charged, c.Now); !ok || err != nil {
		t.Fatalf("the first finish after the restart: %v %v", ok, err)
	}
	if rec := storetest.Lookup(t, s, c); rec.RequestID != c.RequestID || !rec.Terminal() {
		t.Fatalf("record after the crash %+v", rec)
	}
}
