package target

import (
	"fmt"
	"strings"
	"time"

	"github.com/idemcheck/idemcheck/history"
	"github.com/idemcheck/idemcheck/internal/yamlfile"
)

// CrashWindowFits says whether a crash wave can strike at least one of
// the target's crash points and still send every payment's final retry
// (after the wave's strikes and the recovery window) inside the promise,
// clear of its end's band (history.WaveRoom). A retry past the promise
// opens a new epoch, where a crash-induced second charge is outside every
// promise and proves nothing, so a target whose policy leaves no point
// room is refused for that family with what to change. A policy that
// leaves room for some points only is played: the wave strikes those
// (CrashPointsLeftOut names the others). Its error is a
// *yamlfile.FieldError on policy.recovery_window.
func (t *Target) CrashWindowFits() error {
	p := t.Policy
	points := history.CrashWaveFor(t.StoreNames())
	if len(history.OutOfRoom(t.StoreNames(), p)) < len(points) {
		return nil
	}
	cheapest := points[0].Cost
	for _, cp := range points {
		cheapest = min(cheapest, cp.Cost)
	}
	promise, recovery := history.RoomFor(p, cheapest)
	msg := fmt.Sprintf("no crash point fits: a crash-window retry after the shortest strike (%s) and the recovery window (%s), with %s to spare, lands %s after the first request, past the promise max(ttl, retry_window) = %s less its %s boundary band: set policy.retry_window to at least %s",
		cheapest, p.RecoveryWindow, history.WaveMargin, cheapest+p.RecoveryWindow+history.WaveMargin, p.Promise(), p.Band(), promise)
	if recovery > 0 {
		msg += fmt.Sprintf(", or shorten policy.recovery_window to at most %s", recovery)
	}
	return bad("policy.recovery_window", "%s", msg)
}

// CrashPointsLeftOut says which of the target's crash points its policy
// leaves no room to strike (history.OutOfRoom) and what would: "" when
// every point fits. A crash wave strikes the others; L4 needs them all.
func (t *Target) CrashPointsLeftOut() string {
	p := t.Policy
	out := history.OutOfRoom(t.StoreNames(), p)
	if len(out) == 0 {
		return ""
	}
	var names []string
	var longest time.Duration
	for _, cp := range out {
		names = append(names, fmt.Sprintf("%s (a %s strike)", cp.Name, cp.Cost))
		longest = max(longest, cp.Cost)
	}
	promise, recovery := history.RoomFor(p, longest)
	msg := fmt.Sprintf("crash points not struck: %s: the policy leaves a wave %s for its strikes (the promise %s less the recovery window %s, the %s band and %s to spare)",
		strings.Join(names, ", "), max(history.WaveRoom(p), 0), p.Promise(), p.RecoveryWindow, p.Band(), history.WaveMargin)
	msg += fmt.Sprintf("; policy.retry_window %s strikes them", promise)
	if recovery > 0 {
		msg += fmt.Sprintf(", or policy.recovery_window %s", recovery)
	}
	return msg
}

// Refuse places a validation error of t (a *yamlfile.FieldError such as
// CrashWindowFits returns) in t's file, as file:line: field: what to
// change, wrapping ErrInvalid so that the CLI exits 2. Checks that only
// matter for some families run once the families are chosen, after Load,
// which is why they are located here rather than by Parse.
func (t *Target) Refuse(err error) error {
	if err == nil {
		return nil
	}
	name := t.File
	if name == "" {
		name = "built-in target " + t.Name
	}
	return yamlfile.Locate(name, t.src, err, ErrInvalid)
}
