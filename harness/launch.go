package harness

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/target"
)

// Launch is what a fault changes in how a replica is launched, for faults
// that live in the replica's process rather than on its links: its clock,
// or its store sessions' time zone. The zero Launch is the replica as its
// target describes it. Env.Relaunch edits a replica's current Launch, so
// that a clock fault and a time-zone fault on one replica heal apart.
type Launch struct {
	// Clock moves the replica's wall clock by this much, the libfaketime
	// way (Env).
	Clock time.Duration
	// TimeZone is the IANA zone the replica's database sessions run in,
	// set in the store URLs it is given (Apply); "" leaves them as they are.
	TimeZone string
}

// Apply is v with the launch's time zone in its store URLs: PostgreSQL's
// DATABASE_URL gets options=-c TimeZone=<zone> (sent in the startup
// message, honoured by libpq, pgx, JDBC, node-postgres, psycopg), and
// MySQL's go-sql-driver DSN gets time_zone='<±hh:mm>' (a SET on every
// connection; a numeric offset, since named zones need time-zone tables
// the server may lack). The mysql:// URL is left alone: its clients read
// no session variables from it.
func (l Launch) Apply(v target.Vars) (target.Vars, error) {
	if l.TimeZone == "" {
		return v, nil
	}
	loc, err := time.LoadLocation(l.TimeZone)
	if err != nil {
		return v, fmt.Errorf("time zone %q: %w", l.TimeZone, err)
	}
	if v.DatabaseURL != "" {
		if v.DatabaseURL, err = withQuery(v.DatabaseURL, "options", "-c TimeZone="+l.TimeZone); err != nil {
			return v, err
		}
	}
	if v.MySQLDSN != "" {
		sep := "?"
		if strings.Contains(v.MySQLDSN, "?") {
			sep = "&"
		}
		v.MySQLDSN += sep + "time_zone=" + url.QueryEscape("'"+UTCOffset(loc, time.Now())+"'")
	}
	return v, nil
}

// withQuery sets one query parameter of a URL.
func withQuery(raw, k, val string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrDatabaseURL, err)
	}
	q := u.Query()
	q.Set(k, val)
	// A space as %20, not +: libpq and pgx read the query's + literally.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String(), nil
}

// UTCOffset is loc's offset from UTC at t as ±hh:mm ("+05:30").
func UTCOffset(loc *time.Location, t time.Time) string {
	_, secs := t.In(loc).Zone()
	sign := "+"
	if secs < 0 {
		sign, secs = "-", -secs
	}
	return fmt.Sprintf("%s%02d:%02d", sign, secs/3600, secs%3600/60)
}

// LibFakeTime is where Debian's libfaketime package installs the library,
// on the host (process mode) and in a Debian-based image that installs it.
const LibFakeTime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

// Env is the environment the launch adds after the replica's own (so it
// wins): for a skewed clock FAKETIME="+2s" (honoured by the reference
// server and any server that reads it), with LD_PRELOAD=lib when lib is
// not empty (reaching a dynamically linked server that reads the time
// through libc; a Go binary reads it through the vDSO, and a static
// binary ignores LD_PRELOAD).
func (l Launch) Env(lib string) []string {
	if l.Clock == 0 {
		return nil
	}
	env := []string{"FAKETIME=" + FakeTime(l.Clock)}
	if lib != "" {
		env = append(env, "LD_PRELOAD="+lib)
	}
	return env
}

// FakeTime is d in libfaketime's relative form, in seconds: "+2s",
// "-1.5s".
func FakeTime(d time.Duration) string {
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	return sign + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// HostLibFakeTime is LibFakeTime when it is installed on this machine,
// else "": process mode preloads it only where it exists.
func HostLibFakeTime() string {
	if _, err := os.Stat(LibFakeTime); err != nil {
		return ""
	}
	return LibFakeTime
}
