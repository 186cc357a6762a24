package reference_test

import (
	"net/http"
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
