package reference

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseFakeTime reads a relative offset in libfaketime's FAKETIME form:
// a sign, a number and an optional unit, s (the default), m, h, d or y
// ("+3s", "-2", "+1.5m"). A Go binary reads the clock through the vDSO,
// which libfaketime's LD_PRELOAD cannot reach, so the reference server
// honours the variable itself: a harness that skews a replica's clock
// with FAKETIME reaches it as it reaches a libc-based server. Absolute
// times ("@2026-01-01 00:00:00") and speed factors ("x2") are refused.
// The empty string is no offset.
func ParseFakeTime(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if s[0] != '+' && s[0] != '-' {
		return 0, fmt.Errorf("FAKETIME %q: only a relative offset is honoured (want +N or -N with an optional unit s, m, h, d or y, such as +3s)", s)
	}
	num, unit := s, time.Second
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'y': 365 * 24 * time.Hour}
	if u, ok := units[s[len(s)-1]]; ok {
		num, unit = s[:len(s)-1], u
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("FAKETIME %q: want +N or -N with an optional unit s, m, h, d or y, such as +3s", s)
	}
	return time.Duration(x * float64(unit)), nil
}

// OffsetClock is time.Now moved by offset: the wall clock of a server
// whose clock is skewed (Config.Now).
func OffsetClock(offset time.Duration) func() time.Time {
	if offset == 0 {
		return time.Now
	}
	return func() time.Time { return time.Now().Add(offset) }
}

// dated sets every answer's Date header from the server's own clock
// (Config.Now), as a server whose system clock is skewed would send it:
// a client reads the skew there.
func (s *Server) dated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", s.cfg.Now().UTC().Format(http.TimeFormat))
		next.ServeHTTP(w, r)
	})
}

// Clocked is a store that can read its database's clock. With
// Config.StoreClock a server reads it when it starts and before every
// sweep, and stamps every stored time and compares every lease and expiry
// on it instead of its own: replicas whose system clocks disagree then
// agree on when a lease runs out and when a key expires.
type Clocked interface {
	Clock(ctx context.Context) (time.Time, error)
}

// now is the clock of every stored time and every lease and expiry
// comparison: the replica's own (Config.Now), moved onto the store's when
// Config.StoreClock is set and the store is Clocked.
func (s *Server) now() time.Time { return s.cfg.Now().Add(time.Duration(s.offset.Load())) }

// alignClock measures the store's clock against the replica's own, NTP's
// way: of clockSamples readings it keeps the one with the shortest round
// trip and takes its middle as the moment the store read its clock, so
// the error is at most half that round trip. (A single reading is not
// enough: the first one on a new pool includes the connection, and read
// that way a replica came out 679ms ahead of its database, saw a peer's
// fresh lease as run out and took its key over.) Failed readings keep the
// last offset: the database unreachable is not a clock change. It is a
// no-op without Config.StoreClock or a Clocked store.
func (s *Server) alignClock(ctx context.Context) {
	c, ok := s.store.(Clocked)
	if !s.cfg.StoreClock || !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var offset, best time.Duration
	var err error
	for range clockSamples {
		before := s.cfg.Now()
		var at time.Time
		if at, err = c.Clock(ctx); err != nil {
			break
		}
		after := s.cfg.Now()
		if rtt := after.Sub(before); best == 0 || rtt < best {
			best, offset = max(rtt, 1), at.Sub(before.Add(rtt/2))
		}
	}
	if best == 0 {
		if ctx.Err() == nil {
			s.log.Warn("reading the store's clock", "err", err)
		}
		return
	}
	if old := time.Duration(s.offset.Swap(int64(offset))); (old - offset).Abs() > 100*time.Millisecond {
		s.log.Info("store clock", "offset", offset.Round(time.Millisecond), "round_trip", best.Round(time.Microsecond))
	}
}

// clockSamples is how many readings of the store's clock one alignment
// takes.
const clockSamples = 3
