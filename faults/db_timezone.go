package faults

import (
	"context"
	"time"

	"github.com/idemcheck/idemcheck/harness"
	"github.com/idemcheck/idemcheck/history"
)

// DBTimeZone relaunches a replica with its database sessions in a time
// zone other than UTC, as a server deployed where the database's or the
// role's default zone is local time: a timestamp without time zone
// written from the application's UTC clock and compared in SQL with
// now() is then off by the zone's offset. The zone goes into the store
// URLs the replica is given (harness.Launch.Apply): PostgreSQL's
// options=-c TimeZone=<zone>, MySQL's time_zone='<±hh:mm>' in its DSN; a
// server that builds its own connection string from other variables is
// not reached. Heal relaunches the replica on its own URLs.
type DBTimeZone struct {
	Replica int
	Zone    string // IANA name, such as Asia/Kolkata
}

// Name is "db_timezone".
func (f *DBTimeZone) Name() string { return "db_timezone" }

// Class is history.Skews: the relaunches that apply and undo the zone
// are recorded as crash-class faults of their own (relaunch); the zone
// in between disturbs no request of a correct server.
func (f *DBTimeZone) Class() history.Class { return history.Skews }

// Scope is history.Replica: the replica is relaunched to apply and undo it.
func (f *DBTimeZone) Scope() history.Scope { return history.Replica }

// Momentary is true: only the relaunches disrupt, not the state between.
func (f *DBTimeZone) Momentary() bool { return true }

// Target is "replicaN".
func (f *DBTimeZone) Target() string { return replicaName(f.Replica) }

// Params records the zone and its offset from UTC when it was applied.
func (f *DBTimeZone) Params() map[string]string {
	p := map[string]string{"zone": f.Zone}
	if loc, err := time.LoadLocation(f.Zone); err == nil {
		p["utc_offset"] = harness.UTCOffset(loc, time.Now())
	}
	return p
}

// Inject relaunches the replica with the zone in its store URLs.
func (f *DBTimeZone) Inject(ctx context.Context, env Env) error {
	return relaunch(ctx, env, f.Replica, f.Name(), func(l *harness.Launch) { l.TimeZone = f.Zone })
}

// Heal relaunches the replica on its own URLs.
func (f *DBTimeZone) Heal(ctx context.Context, env Env) error {
	return relaunch(ctx, env, f.Replica, f.Name(), func(l *harness.Launch) { l.TimeZone = "" })
}

func init() {
	register("db_timezone", builder{"replica", []string{"zone"}, func(r *reader) Fault {
		zone := r.str("zone", true)
		if _, err := time.LoadLocation(zone); r.err == nil && (err != nil || zone == "" || zone == "UTC" || zone == "Local") {
			r.fail("zone", "want an IANA time zone other than UTC, such as Asia/Kolkata or America/New_York, got %q", zone)
		}
		return &DBTimeZone{Replica: r.replica, Zone: zone}
	}})
}
