package reference_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reference"
)

func TestParseFakeTime_ReadsLibfaketimesRelativeForm(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "+3s": 3 * time.Second, "-2": -2 * time.Second, "+1.5m": 90 * time.Second, "-1d": -24 * time.Hour, " +250ms": 0} {
		got, err := reference.ParseFakeTime(in)
		if in == " +250ms" {
			if err == nil {
				t.Errorf("%q: want an error (ms is not a libfaketime unit)", in)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"@2026-01-01 00:00:00", "2026-01-01", "+2 x2", "+s"} {
		if _, err := reference.ParseFakeTime(in); err == nil {
			t.Errorf("%q: want an error", in)
		}
	}
}

func TestServer_DatesAnswersByItsOwnClock(t *testing.T) {
	e := newEnv(t, envOptions{config: func(c *reference.Config) { c.Now = reference.OffsetClock(-90 * time.Second) }})
	before := time.Now()
	resp, err := http.Get(e.replicas[0].url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	d, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		t.Fatal(err)
	}
	if off := d.Sub(before.Truncate(time.Second)); off < -91*time.Second || off > -89*time.Second {
		t.Errorf("Date is %s off the real clock, want about -90s", off)
	}
}

// A replica whose system clock is 90s behind stamps its keys on the
// database's clock with StoreClock, and on its own without: the lease a
// skewed replica writes would otherwise run out 90s early for its peers.
func TestServer_StoreClockStampsOnTheDatabasesTime(t *testing.T) {
	for _, aligned := range []bool{true, false} {
		e := newEnv(t, envOptions{config: func(c *reference.Config) {
			c.Now = reference.OffsetClock(-90 * time.Second)
			c.StoreClock = aligned
		}})
		order := uniq("order")
		r := e.mustPost(e.replicas[0].url, charge{tenant: "t1", key: uniq("clock"), body: chargeBody(order, 100)})
		if r.status != http.StatusCreated {
			t.Fatalf("charge: %s", r)
		}
		var off time.Duration
		if err := e.db.QueryRow(context.Background(),
			`SELECT (extract(epoch FROM created_at - clock_timestamp()) * 1e6)::bigint * 1000 FROM idempotency_keys WHERE order_id = $1`, order).Scan(&off); err != nil {
			t.Fatal(err)
		}
		if aligned && (off < -5*time.Second || off > time.Second) {
			t.Errorf("StoreClock: created_at is %s off the database's clock, want within a few seconds", off)
		}
		if !aligned && (off > -85*time.Second || off < -95*time.Second) {
			t.Errorf("without StoreClock: created_at is %s off the database's clock, want about -90s", off)
		}
		d, err := http.ParseTime(r.header.Get("Date"))
		if err != nil {
			t.Fatal(err)
		}
		if off := time.Until(d); off > -85*time.Second {
			t.Errorf("Date is %s off the real clock, want about -90s: the Date header keeps the replica's own clock", off)
		}
	}
}

// slowFirstClock is the reference's store whose first clock reading takes
// a second longer, as the first statement on a new pool waits for its
// connection.
type slowFirstClock struct {
	*reference.PostgresStore
	reads atomic.Int32
}

func (s *slowFirstClock) Clock(ctx context.Context) (time.Time, error) {
	if s.reads.Add(1) == 1 {
		time.Sleep(time.Second) // the connection's latency, not a synchronisation
	}
	return s.PostgresStore.Clock(ctx)
}

// A slow first reading of the database's clock does not move the
// replica's clock: the alignment keeps the reading with the shortest
// round trip (a midpoint of the slow one would put it 0.5s ahead, and
// ahead of its peers a replica takes over their fresh claims).
func TestServer_StoreClockKeepsTheShortestRoundTrip(t *testing.T) {
	var clock *slowFirstClock
	e := newEnv(t, envOptions{config: func(c *reference.Config) {
		clock = &slowFirstClock{PostgresStore: reference.NewPostgresStore(c.Pool)}
		c.Store, c.StoreClock = clock, true
	}})
	if n := clock.reads.Load(); n < 2 {
		t.Fatalf("the store's clock was read %d times when the server started, want several", n)
	}
	dbNow := func() (at time.Time) {
		if err := e.db.QueryRow(context.Background(), "SELECT clock_timestamp()").Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	order := uniq("order")
	before := dbNow()
	r := e.mustPost(e.replicas[0].url, charge{tenant: "t1", key: uniq("clock"), body: chargeBody(order, 100)})
	after := dbNow()
	if r.status != http.StatusCreated {
		t.Fatalf("charge: %s", r)
	}
	var created time.Time
	if err := e.db.QueryRow(context.Background(), "SELECT created_at FROM idempotency_keys WHERE order_id = $1", order).Scan(&created); err != nil {
		t.Fatal(err)
	}
	if slack := 100 * time.Millisecond; created.Before(before.Add(-slack)) || created.After(after.Add(slack)) {
		t.Errorf("created_at %s is outside the charge's time on the database's clock [%s, %s]: the slow reading moved the replica's clock",
			created.Format("15:04:05.000"), before.Format("15:04:05.000"), after.Format("15:04:05.000"))
	}
}
